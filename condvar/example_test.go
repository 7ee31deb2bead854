package condvar_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// A condition bound to a Monitor (Java's lock.newCondition(), Ruby's
// new_cond), waited on with a predicate and with a timeout.
func ExampleCond() {
	var (
		m        monitor.Monitor
		notEmpty = m.NewCond() // or condvar.New(&anyLocker)
		queue    []string      // guarded by m
	)
	go func() {
		m.Lock()
		defer m.Unlock()
		queue = append(queue, "job")
		notEmpty.Signal()
	}()

	m.Lock()
	defer m.Unlock()
	notEmpty.WaitWhile(func() bool { return len(queue) == 0 }) // Ruby's wait_while
	fmt.Println(queue[0])
	fmt.Println(notEmpty.WaitTimeout(10 * time.Millisecond)) // nobody signals: false, m held again
	// Output:
	// job
	// false
}

// A Cond bound to a mutex.Mutex: a one-slot mailbox.
func ExampleNew() {
	var (
		mu   mutex.Mutex
		full = condvar.New(&mu)
		box  []string // guarded by mu
	)
	go func() {
		for _, s := range []string{"a", "b", "c"} {
			mu.Lock()
			box = append(box, s)
			full.Signal()
			mu.Unlock()
		}
	}()
	mu.Lock()
	for got := 0; got < 3; {
		full.WaitWhile(func() bool { return len(box) == 0 })
		fmt.Println(box[0])
		box = box[1:]
		got++
	}
	mu.Unlock()
	// Output:
	// a
	// b
	// c
}

// WaitTimeout reports whether the wait was signalled; either way the lock
// is held again when it returns.
func ExampleCond_WaitTimeout() {
	var mu sync.Mutex
	c := condvar.New(&mu)
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(c.WaitTimeout(10 * time.Millisecond))
	// Output: false
}

func ExampleCond_WaitContext() {
	var mu mutex.Mutex
	c := condvar.New(&mu)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(c.WaitContext(ctx))
	// Output: context canceled
}

// Waiting on a Monitor releases every hold and restores them all.
func ExampleCond_Wait() {
	var m monitor.Monitor
	c := m.NewCond()
	ready := false // guarded by m
	go func() {
		m.Lock()
		ready = true
		c.Broadcast()
		m.Unlock()
	}()
	m.Lock()
	m.Lock()
	for !ready {
		c.Wait()
	}
	fmt.Println(m.HoldCount())
	m.Unlock()
	m.Unlock()
	// Output: 2
}

func ExampleCond_WaitUntil() {
	var (
		mu    sync.Mutex
		c     = condvar.New(&mu)
		count int // guarded by mu
	)
	for range 3 {
		go func() {
			mu.Lock()
			count++
			c.Broadcast()
			mu.Unlock()
		}()
	}
	mu.Lock()
	c.WaitUntil(func() bool { return count == 3 })
	fmt.Println(count)
	mu.Unlock()
	// Output: 3
}

// A Cond can be declared as a struct with its lock in L, as a sync.Cond
// is. Signal may be called with or without the lock held; Wait on an
// owner-aware lock without holding it panics with ErrNotOwner.
func ExampleCond_Signal() {
	var (
		mu    mutex.Mutex
		c     = &condvar.Cond{L: &mu}
		ready bool // guarded by mu
	)
	done := make(chan struct{})
	go func() {
		mu.Lock()
		for !ready {
			c.Wait()
		}
		mu.Unlock()
		close(done)
	}()
	mu.Lock()
	ready = true
	mu.Unlock()
	c.Signal() // after the Unlock, as sync.Cond allows
	<-done
	fmt.Println("woken")

	defer func() {
		err := recover().(error)
		fmt.Println(errors.Is(err, condvar.ErrNotOwner))
	}()
	c.Wait() // without the lock
	// Output:
	// woken
	// true
}
