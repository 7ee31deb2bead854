package shapes

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/mutex"
)

// A lock held across a blocking operation that waits for a goroutine
// which first needs the lock. Each shape comes twice: in the Hang form
// the test's own goroutine holds the lock, so the test never ends; in the
// Leak form two goroutines the test started deadlock and the test
// returns without them, leaving them behind.
//
// A shape's make returns the holder's side, called with mu held, which
// waits in the shape's way for the other side and then unlocks mu (the
// fixed twin unlocks first), and the other side, which takes mu before it
// wakes the holder.
type heldShape struct {
	bug, fixed func(mu *mutex.Mutex) (holder, other func())
}

var held = map[string]heldShape{
	"Send": {
		bug: func(mu *mutex.Mutex) (func(), func()) {
			ch := make(chan int)
			return func() { ch <- 1; mu.Unlock() },
				func() { mu.Lock(); mu.Unlock(); <-ch }
		},
		fixed: func(mu *mutex.Mutex) (func(), func()) {
			ch := make(chan int)
			return func() { mu.Unlock(); ch <- 1 },
				func() { mu.Lock(); mu.Unlock(); <-ch }
		},
	},
	"Receive": {
		bug: func(mu *mutex.Mutex) (func(), func()) {
			ch := make(chan int)
			return func() { <-ch; mu.Unlock() },
				func() { mu.Lock(); mu.Unlock(); ch <- 1 }
		},
		fixed: func(mu *mutex.Mutex) (func(), func()) {
			ch := make(chan int)
			return func() { mu.Unlock(); <-ch },
				func() { mu.Lock(); mu.Unlock(); ch <- 1 }
		},
	},
	"Select": {
		bug: func(mu *mutex.Mutex) (func(), func()) {
			res, errs := make(chan int), make(chan error)
			return func() {
					defer mu.Unlock()
					select {
					case <-res:
					case <-errs:
					}
				},
				func() { mu.Lock(); mu.Unlock(); res <- 1 }
		},
		fixed: func(mu *mutex.Mutex) (func(), func()) {
			res, errs := make(chan int), make(chan error)
			return func() {
					mu.Unlock()
					select {
					case <-res:
					case <-errs:
					}
				},
				func() { mu.Lock(); mu.Unlock(); res <- 1 }
		},
	},
	"WaitGroup": {
		bug: func(mu *mutex.Mutex) (func(), func()) {
			var wg sync.WaitGroup
			wg.Add(1)
			return func() { wg.Wait(); mu.Unlock() },
				func() { mu.Lock(); mu.Unlock(); wg.Done() }
		},
		fixed: func(mu *mutex.Mutex) (func(), func()) {
			var wg sync.WaitGroup
			wg.Add(1)
			return func() { mu.Unlock(); wg.Wait() },
				func() { mu.Lock(); mu.Unlock(); wg.Done() }
		},
	},
	// The other side is inside once.Do, whose function needs mu; the
	// holder calls the same once.Do with mu held and waits for it.
	"Once": {
		bug: func(mu *mutex.Mutex) (func(), func()) {
			var once sync.Once
			inside := make(chan struct{})
			return func() { <-inside; once.Do(func() {}); mu.Unlock() },
				func() { once.Do(func() { close(inside); mu.Lock(); mu.Unlock() }) }
		},
		fixed: func(mu *mutex.Mutex) (func(), func()) {
			var once sync.Once
			inside := make(chan struct{})
			return func() { mu.Unlock(); <-inside; once.Do(func() {}) },
				func() { once.Do(func() { close(inside); mu.Lock(); mu.Unlock() }) }
		},
	},
}

func sides(name string, fixed bool, mu *mutex.Mutex) (holder, other func()) {
	if fixed {
		return held[name].fixed(mu)
	}
	return held[name].bug(mu)
}

// hang: the test's goroutine holds mu across the wait.
func hang(t *testing.T, name string, fixed bool) {
	helper(t)
	var mu mutex.Mutex
	holder, other := sides(name, fixed, &mu)
	mu.Lock()
	done := make(chan struct{})
	go func() { defer close(done); other() }()
	holder()
	<-done
}

// leak: a goroutine holds mu across the wait; the test returns once the
// other side is on its way to mu (the bug), or when both have finished
// (the fix).
func leak(t *testing.T, name string, fixed bool) {
	helper(t)
	var mu mutex.Mutex
	holder, other := sides(name, fixed, &mu)
	holding, trying := make(chan struct{}), make(chan struct{})
	done := make(chan struct{}, 2)
	go func() {
		defer func() { done <- struct{}{} }()
		mu.Lock()
		close(holding)
		holder()
	}()
	go func() {
		defer func() { done <- struct{}{} }()
		<-holding
		close(trying)
		other()
	}()
	<-trying
	if fixed {
		<-done
		<-done
	}
}

func TestBugHeldSendHang(t *testing.T)        { hang(t, "Send", false) }
func TestFixedHeldSendHang(t *testing.T)      { hang(t, "Send", true) }
func TestBugHeldReceiveHang(t *testing.T)     { hang(t, "Receive", false) }
func TestFixedHeldReceiveHang(t *testing.T)   { hang(t, "Receive", true) }
func TestBugHeldSelectHang(t *testing.T)      { hang(t, "Select", false) }
func TestFixedHeldSelectHang(t *testing.T)    { hang(t, "Select", true) }
func TestBugHeldWaitGroupHang(t *testing.T)   { hang(t, "WaitGroup", false) }
func TestFixedHeldWaitGroupHang(t *testing.T) { hang(t, "WaitGroup", true) }
func TestBugHeldOnceHang(t *testing.T)        { hang(t, "Once", false) }
func TestFixedHeldOnceHang(t *testing.T)      { hang(t, "Once", true) }

func TestBugHeldSendLeak(t *testing.T)        { leak(t, "Send", false) }
func TestFixedHeldSendLeak(t *testing.T)      { leak(t, "Send", true) }
func TestBugHeldReceiveLeak(t *testing.T)     { leak(t, "Receive", false) }
func TestFixedHeldReceiveLeak(t *testing.T)   { leak(t, "Receive", true) }
func TestBugHeldSelectLeak(t *testing.T)      { leak(t, "Select", false) }
func TestFixedHeldSelectLeak(t *testing.T)    { leak(t, "Select", true) }
func TestBugHeldWaitGroupLeak(t *testing.T)   { leak(t, "WaitGroup", false) }
func TestFixedHeldWaitGroupLeak(t *testing.T) { leak(t, "WaitGroup", true) }
func TestBugHeldOnceLeak(t *testing.T)        { leak(t, "Once", false) }
func TestFixedHeldOnceLeak(t *testing.T)      { leak(t, "Once", true) }
