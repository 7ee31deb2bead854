package shapes

import (
	"testing"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// Cond shapes. As in held_test.go, the Hang form waits in the test's own
// goroutine and the Leak form in a goroutine the test leaves behind.

// condShape is a waiter and a signaller around one condition. The waiter
// takes what it holds, calls parked once it is about to wait, and waits
// for ready; the signaller sets ready and signals.
type condShape func(fixed bool) (waiter func(parked func()), signaller func())

// A read lock held across a Cond wait: the signaller must write-lock the
// state the waiter reads first, and the waiter's read hold keeps it out.
func rlockCondWait(fixed bool) (func(func()), func()) {
	var rw mutex.RWMutex
	var mu mutex.Mutex
	c := condvar.New(&mu)
	ready := false
	waiter := func(parked func()) {
		rw.RLock()
		if fixed {
			rw.RUnlock() // read what is needed, then release
		}
		mu.Lock()
		parked()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
		if !fixed {
			rw.RUnlock()
		}
	}
	signaller := func() {
		rw.Lock()
		rw.Unlock()
		mu.Lock()
		ready = true
		c.Signal()
		mu.Unlock()
	}
	return waiter, signaller
}

// A mutex held across a Cond wait on another lock (the nested monitor
// lockout): the wait releases the Cond's lock only, and the signaller
// needs the outer one.
func nestedCondWait(fixed bool) (func(func()), func()) {
	var outer, mu mutex.Mutex
	c := condvar.New(&mu)
	ready := false
	waiter := func(parked func()) {
		outer.Lock()
		if fixed {
			outer.Unlock()
		}
		mu.Lock()
		parked()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
		if !fixed {
			outer.Unlock()
		}
	}
	signaller := func() {
		outer.Lock()
		outer.Unlock()
		mu.Lock()
		ready = true
		c.Signal()
		mu.Unlock()
	}
	return waiter, signaller
}

// A Cond nobody signals: the signaller sets the condition and forgets
// Signal. It can take mu only once the waiter is parked in Wait, so the
// waiter never sees ready.
func condNoSignal(fixed bool) (func(func()), func()) {
	var mu mutex.Mutex
	c := condvar.New(&mu)
	ready := false
	waiter := func(parked func()) {
		mu.Lock()
		parked()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
	}
	signaller := func() {
		mu.Lock()
		ready = true
		if fixed {
			c.Signal()
		}
		mu.Unlock()
	}
	return waiter, signaller
}

// condHang waits in the test's goroutine; the signaller starts once the
// waiter holds what it holds.
func condHang(t *testing.T, s condShape, fixed bool) {
	helper(t)
	waiter, signaller := s(fixed)
	done := make(chan struct{})
	waiter(func() {
		go func() { defer close(done); signaller() }()
	})
	<-done
}

// condLeak waits in a goroutine and returns once the signaller is on
// its way (the bug), or when both are done (the fix).
func condLeak(t *testing.T, s condShape, fixed bool) {
	helper(t)
	waiter, signaller := s(fixed)
	parked, signalling := make(chan struct{}), make(chan struct{})
	waited, signalled := make(chan struct{}), make(chan struct{})
	go func() { defer close(waited); waiter(func() { close(parked) }) }()
	go func() { defer close(signalled); <-parked; close(signalling); signaller() }()
	<-signalling
	if fixed {
		<-waited
		<-signalled
	}
}

func TestBugRLockCondWaitHang(t *testing.T)   { condHang(t, rlockCondWait, false) }
func TestFixedRLockCondWaitHang(t *testing.T) { condHang(t, rlockCondWait, true) }
func TestBugRLockCondWaitLeak(t *testing.T)   { condLeak(t, rlockCondWait, false) }
func TestFixedRLockCondWaitLeak(t *testing.T) { condLeak(t, rlockCondWait, true) }
func TestBugNestedCondWaitHang(t *testing.T)  { condHang(t, nestedCondWait, false) }
func TestFixedNestedCondWaitHang(t *testing.T) {
	condHang(t, nestedCondWait, true)
}
func TestBugNestedCondWaitLeak(t *testing.T)   { condLeak(t, nestedCondWait, false) }
func TestFixedNestedCondWaitLeak(t *testing.T) { condLeak(t, nestedCondWait, true) }
func TestBugCondNoSignalHang(t *testing.T)     { condHang(t, condNoSignal, false) }
func TestFixedCondNoSignalHang(t *testing.T)   { condHang(t, condNoSignal, true) }
func TestBugCondNoSignalLeak(t *testing.T)     { condLeak(t, condNoSignal, false) }
func TestFixedCondNoSignalLeak(t *testing.T)   { condLeak(t, condNoSignal, true) }

// A Monitor held across another Monitor's Wait.
func monitorNestedWait(fixed bool) (func(func()), func()) {
	var outer, inner monitor.Monitor
	ready := false
	waiter := func(parked func()) {
		outer.Lock()
		if fixed {
			outer.Unlock()
		}
		inner.Lock()
		parked()
		for !ready {
			inner.Wait()
		}
		inner.Unlock()
		if !fixed {
			outer.Unlock()
		}
	}
	signaller := func() {
		outer.Lock()
		defer outer.Unlock()
		inner.Lock()
		ready = true
		inner.Notify()
		inner.Unlock()
	}
	return waiter, signaller
}

func TestBugMonitorNestedWaitHang(t *testing.T)   { condHang(t, monitorNestedWait, false) }
func TestFixedMonitorNestedWaitHang(t *testing.T) { condHang(t, monitorNestedWait, true) }
