//go:build go1.25

package testutil

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// AcrossBubbles runs inBubble in each of bubbles testing/synctest bubbles
// (subtests bubble0, bubble1, ...) and outside on outsiders goroutines
// outside any bubble, all at the same time (each starts once all have
// arrived), and waits for all of them within the liveness deadline. It is
// how the lock packages check that a lock or Cond shared across bubbles
// never kills the program.
func AcrossBubbles(t *testing.T, bubbles int, inBubble func(t *testing.T), outsiders int, outside func()) {
	t.Helper()
	gate := make(chan struct{}) // made outside any bubble: every side may wait on it
	var arrived atomic.Int32
	all := int32(bubbles + outsiders)
	arrive := func() {
		if arrived.Add(1) == all {
			close(gate)
		}
		<-gate
	}
	var wg sync.WaitGroup
	for i := range bubbles {
		wg.Go(func() {
			t.Run(fmt.Sprintf("bubble%d", i), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					arrive()
					inBubble(t)
				})
			})
		})
	}
	for range outsiders {
		wg.Go(func() {
			arrive()
			outside()
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	Await(t, done, "bubbles and outside goroutines")
}

// Workers runs f(i) for i in [0, n) on n goroutines and waits for them.
// Inside a bubble the wait is durable (a WaitGroup of the bubble).
func Workers(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { f(i) })
	}
	wg.Wait()
}
