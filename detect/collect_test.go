package detect_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// waitForGC runs the collector until cond holds: the scan that forgets
// collected locks runs asynchronously after the cycle that finds them
// unreachable.
func waitForGC(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.Liveness)
	for {
		runtime.GC()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %v", what, testutil.Liveness)
		}
		runtime.Gosched()
	}
}

// onCollect counts l's collection in n. Before go1.24 the detector holds
// the locks it knows strongly (it has no weak pointers; see package
// internal/compat), so a test that waits for a lock to be collected is
// skipped there.
func onCollect(t testing.TB, l sync.Locker, n *atomic.Int32) {
	t.Helper()
	if !compat.WeakPointers {
		t.Skip("the detector holds the locks it knows strongly before go1.24: no lock it knows is collected")
	}
	count := func(int) { n.Add(1) }
	switch x := l.(type) {
	case *mutex.Mutex:
		compat.AddCleanup(x, count, 0)
	case *monitor.Monitor:
		compat.AddCleanup(x, count, 0)
	case *mutex.RWMutex:
		compat.AddCleanup(x, count, 0)
	case *monitor.RWMonitor:
		compat.AddCleanup(x, count, 0)
	default:
		panic("not a locksmith lock")
	}
}
