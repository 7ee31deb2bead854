package shapes

import (
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/mutex"
)

// A goroutine returns with the lock held; the next Lock waits for good.

func TestBugGoroutineReturnsHeld(t *testing.T) {
	helper(t)
	var mu mutex.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.Lock()
		if true {
			return // the Unlock below is skipped
		}
		mu.Unlock()
	}()
	<-done
	mu.Lock()
	mu.Unlock()
}

func TestFixedGoroutineReturnsHeld(t *testing.T) {
	helper(t)
	var mu mutex.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		mu.Lock()
		defer mu.Unlock()
	}()
	<-done
	mu.Lock()
	mu.Unlock()
}

// A timer callback returns with the lock held.

func TestBugTimerReturnsHeld(t *testing.T) {
	helper(t)
	var mu mutex.Mutex
	fired := make(chan struct{})
	time.AfterFunc(time.Millisecond, func() {
		mu.Lock()
		close(fired) // and returns holding mu
	})
	<-fired
	mu.Lock()
	mu.Unlock()
}

func TestFixedTimerReturnsHeld(t *testing.T) {
	helper(t)
	var mu mutex.Mutex
	fired := make(chan struct{})
	time.AfterFunc(time.Millisecond, func() {
		mu.Lock()
		defer mu.Unlock()
		close(fired)
	})
	<-fired
	mu.Lock()
	mu.Unlock()
}

// A goroutine returns with a read lock held; the writer waits for good.

func TestBugReaderReturnsHeld(t *testing.T) {
	helper(t)
	var rw mutex.RWMutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		rw.RLock()
	}()
	<-done
	rw.Lock()
	rw.Unlock()
}

func TestFixedReaderReturnsHeld(t *testing.T) {
	helper(t)
	var rw mutex.RWMutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		rw.RLock()
		defer rw.RUnlock()
	}()
	<-done
	rw.Lock()
	rw.Unlock()
}
