package deadlock

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// errHandedOff is the error of a handoff once it has fired: the lock a
// waiter was waiting for has left its locksmith lock (see Mutex).
var errHandedOff = errors.New("deadlock: lock handed off to another goroutine")

// handoff is a context.Context, embedded in each Mutex and RWMutex, that
// is done once the lock has been unlocked by a goroutine other than the
// one that locked it. Waiters on the locksmith lock wait with it
// (LockContext), so that they leave that lock, which its holder will never
// release, and retry on the sync lock that replaces it.
//
// Rejected alternative: context.WithCancel per lock. It allocates, and a
// zero Mutex must work without a constructor; Err, on every Lock, is one
// atomic load here, and the channel is made only by a waiter that parks.
type handoff struct {
	done atomic.Bool // set once, under mu
	mu   sync.Mutex
	ch   chan struct{} // guarded by mu: made by the first Done, closed by fire
}

func (h *handoff) Deadline() (time.Time, bool) { return time.Time{}, false }
func (h *handoff) Value(any) any               { return nil }

func (h *handoff) Err() error {
	if h.done.Load() {
		return errHandedOff
	}
	return nil
}

func (h *handoff) Done() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ch == nil {
		h.ch = make(chan struct{})
		if h.done.Load() {
			close(h.ch)
		}
	}
	return h.ch
}

// fire makes h done; calls after the first do nothing.
func (h *handoff) fire() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done.Load() {
		return
	}
	h.done.Store(true)
	if h.ch != nil {
		close(h.ch)
	}
}

// await waits until h is done: a goroutine locking a lock it holds waits
// for another goroutine to unlock it, as it would with sync.Mutex. If the
// wait lasts longer than the wait timeout in force, it is reported once
// (recursive locking, or a hand-off that never comes) and goes on.
func (h *handoff) await(what string) {
	ch := h.Done()
	d := waitTimeout()
	if d <= 0 {
		<-ch
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return
	case <-t.C:
		reportSelfWait(what, d)
	}
	<-ch
}
