//go:build go1.25

package monitor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

var (
	sharedMon monitor.Monitor
	sharedN   int // guarded by sharedMon
)

// hammerShared takes sharedMon n times, re-entering it, through Lock,
// TryLock and LockContext (with contexts that another goroutine cancels),
// and counts its successful acquisitions.
func hammerShared(n int, count *atomic.Int64) {
	for i := range n {
		switch i % 4 {
		case 1:
			if !sharedMon.TryLock() {
				continue
			}
		case 2:
			ctx, cancel := context.WithCancel(context.Background())
			go cancel()
			err := sharedMon.LockContext(ctx)
			cancel()
			if err != nil {
				continue
			}
		default:
			sharedMon.Lock()
		}
		sharedMon.Lock()
		sharedN++
		count.Add(1)
		sharedMon.Unlock()
		sharedMon.Unlock()
	}
}

// Two bubbles and goroutines outside any hammer one package-level Monitor
// at the same time: nothing dies, and every acquisition is exclusive.
func TestSynctestMonitorSharedAcrossBubbles(t *testing.T) {
	const rounds, workers, iters = 8, 4, 2000
	var count atomic.Int64
	start := sharedN
	for range rounds {
		testutil.AcrossBubbles(t, 2, func(t *testing.T) {
			testutil.Workers(workers, func(int) { hammerShared(iters, &count) })
		}, workers, func() { hammerShared(iters, &count) })
	}
	sharedMon.Lock()
	assert.Equal(t, int(count.Load()), sharedN-start)
	sharedMon.Unlock()
	assert.Zero(t, monitor.QueueLen(&sharedMon))

	// Used by one bubble only afterwards, it blocks durably again.
	synctest.Test(t, func(t *testing.T) {
		sharedMon.Lock()
		done := make(chan struct{})
		go func() {
			defer close(done)
			sharedMon.Lock()
			sharedMon.Unlock()
		}()
		synctest.Wait()
		assert.Equal(t, 1, monitor.QueueLen(&sharedMon))
		sharedMon.Unlock()
		<-done
	})
}
