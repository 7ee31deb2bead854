package cputime_test

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/cputime"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTotalCountsWork: a loop that keeps this goroutine on a CPU for 20 ms
// of real time moves the process's CPU time forward by at least part of
// that, and Total is the sum of Split's two parts.
func TestTotalCountsWork(t *testing.T) {
	if !cputime.Available {
		t.Skip("no CPU time on this system")
	}
	before := cputime.Total()
	x := uint64(1)
	for start := time.Now(); time.Since(start) < 20*time.Millisecond; {
		x = x*6364136223846793005 + 1
	}
	sink = x
	after := cputime.Total()
	if after-before < time.Millisecond {
		t.Errorf("20 ms of spinning added %v of CPU time", after-before)
	}
	u, s := cputime.Split()
	if u <= 0 || s < 0 || u+s < after {
		t.Errorf("Split = %v + %v, below Total's earlier %v", u, s, after)
	}
}

var sink uint64
