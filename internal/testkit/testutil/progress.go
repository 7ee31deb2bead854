package testutil

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// Progress counts the steps of work that goroutines do in parallel, one
// counter per goroutine on a cache line of its own. Each goroutine writes
// only its own counter and only the watcher reads them, so the counters
// order nothing between the goroutines: the race detector still sees
// exactly the synchronization of the code under test.
type Progress struct{ counts []paddedCount }

type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

// NewProgress returns a Progress for n goroutines.
func NewProgress(n int) *Progress { return &Progress{counts: make([]paddedCount, n)} }

// Step records one step of goroutine i.
func (p *Progress) Step(i int) { p.counts[i].n.Add(1) }

// Total returns the number of steps recorded so far.
func (p *Progress) Total() int64 {
	var sum int64
	for i := range p.counts {
		sum += p.counts[i].n.Load()
	}
	return sum
}

// AwaitProgress waits for done to be closed, as Await does, for work that
// counts its steps in p. The liveness deadline runs from the last step
// rather than from the start: a run that a loaded machine slows down
// passes while it advances, and a run that stops (a lost wakeup, a
// goroutine that never gets the lock) fails Liveness after its last step.
// The wait also ends, as a failure that says how far the run got, at
// nine tenths of the time the test has left (testing.T.Deadline, from go
// test -timeout), so that a run too slow for the timeout fails with that
// report rather than the test binary's timeout panic.
func AwaitProgress(t *testing.T, done <-chan struct{}, what string, p *Progress) {
	t.Helper()
	var deadline time.Time
	if dl, ok := t.Deadline(); ok {
		deadline = time.Now().Add(time.Until(dl) * 9 / 10)
	}
	if err := awaitProgress(done, p.Total, Liveness, deadline); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// awaitProgress returns nil once done is closed, or an error once
// progress has not changed for stall or deadline (if not zero) has
// passed. It looks at progress stall/20 apart.
func awaitProgress(done <-chan struct{}, progress func() int64, stall time.Duration, deadline time.Time) error {
	tick := time.NewTicker(stall / 20)
	defer tick.Stop()
	last, lastAt := progress(), time.Now()
	for {
		select {
		case <-done:
			return nil
		case now := <-tick.C:
			select {
			case <-done: // both ready: the work finished in time
				return nil
			default:
			}
			if n := progress(); n != last {
				last, lastAt = n, now
			} else if stalled := now.Sub(lastAt); stalled >= stall {
				return fmt.Errorf("no progress for %v, after %d steps", stalled.Round(time.Millisecond), n)
			}
			if !deadline.IsZero() && now.After(deadline) {
				return fmt.Errorf("not done by nine tenths of the test's -timeout, after %d steps", last)
			}
		}
	}
}
