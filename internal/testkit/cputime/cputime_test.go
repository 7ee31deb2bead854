package cputime_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTotalCountsWork: spinning on a CPU moves the process's CPU time
// forward (by a millisecond well within the liveness deadline, however
// loaded the machine), and Total is the sum of Split's two parts.
func TestTotalCountsWork(t *testing.T) {
	if !cputime.Available {
		t.Skip("no CPU time on this system")
	}
	before := cputime.Total()
	deadline := time.Now().Add(testutil.Liveness)
	x := uint64(1)
	for cputime.Total()-before < time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("CPU time moved by %v in %v of spinning", cputime.Total()-before, testutil.Liveness)
		}
		for range 100000 {
			x = x*6364136223846793005 + 1
		}
	}
	sink = x
	after := cputime.Total()
	u, s := cputime.Split()
	if u < 0 || s < 0 || u+s < after { // the kernel splits by tick samples: either part may be zero
		t.Errorf("Split = %v + %v, below Total's earlier %v", u, s, after)
	}
}

var sink uint64
