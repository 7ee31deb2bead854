package detectdiff_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ownPrefix starts the names of this test package's functions, for
// detecttest.OwnFrame.
const ownPrefix = "github.com/locksmith-go/locksmith/bench/detectdiff_test."

// lockPair takes a then b on the calling goroutine and releases both.
func lockPair(a, b sync.Locker) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}

// onGoroutine runs f on a new goroutine and waits for it.
func onGoroutine(t testing.TB, f func()) int64 {
	t.Helper()
	p := testutil.Spawn(f)
	require.Nil(t, p.Wait(t))
	return p.G
}

// helperEnv, when set, makes TestHelperProcess act as a child process for
// the role named in it instead of skipping.
const helperEnv = "LOCKSMITH_DETECTDIFF_TEST_HELPER"

// runHelper runs this test binary again, running only TestHelperProcess
// with helperEnv=role, and returns its stdout and stderr.
func runHelper(t *testing.T, role string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	// The race detector's runtime sleeps a second at exit by default.
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, err, "child %s:\nstdout:\n%s\nstderr:\n%s", role, out.String(), errb.String())
	return out.String(), errb.String()
}

// TestHelperProcess is not a test: it is the child of runHelper.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("child process helper")
	}
	switch role {
	case "godeadlock-hidden-holder":
		goDeadlockHiddenHolderChild(t)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// retainedMiB returns how much more heap is in use, after collection, than
// before.
func retainedMiB(before runtime.MemStats) float64 {
	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return (float64(after.HeapInuse) - float64(before.HeapInuse)) / (1 << 20)
}

func baseline() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}
