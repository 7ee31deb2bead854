//go:build go1.25

package testutil

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
)

// AcrossBubbles runs inBubble in each of bubbles testing/synctest bubbles
// (subtests bubble0, bubble1, ...) and outside on outsiders goroutines
// outside any bubble, all at the same time, and waits for all of them
// within the liveness deadline. It is how the lock packages check that a
// lock or Cond shared across bubbles never kills the program.
func AcrossBubbles(t *testing.T, bubbles int, inBubble func(t *testing.T), outsiders int, outside func()) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range bubbles {
		wg.Go(func() {
			t.Run(fmt.Sprintf("bubble%d", i), func(t *testing.T) { synctest.Test(t, inBubble) })
		})
	}
	for range outsiders {
		wg.Go(outside)
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
