package mutex_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/mutex"
)

func ExampleMutex() {
	var (
		mu    mutex.Mutex
		count int // guarded by mu
		wg    sync.WaitGroup
	)
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			count++
		}()
	}
	wg.Wait()
	fmt.Println(count)
	// Output: 10
}

// Locking a Mutex again from the goroutine that holds it panics at once
// instead of hanging.
func ExampleMutex_Lock() {
	var mu mutex.Mutex
	mu.Lock()
	defer mu.Unlock()
	defer func() {
		err := recover().(error)
		fmt.Println(errors.Is(err, mutex.ErrRecursiveLock))
		fmt.Println(mu.Owned()) // the mutex is still held by the caller
	}()
	mu.Lock()
	// Output:
	// true
	// true
}

// Only the goroutine that locked a Mutex may unlock it; a wrong Unlock
// panics and leaves the mutex as it was.
func ExampleMutex_Unlock() {
	var mu mutex.Mutex
	mu.Lock()
	done := make(chan error)
	go func() {
		defer func() { done <- recover().(error) }()
		mu.Unlock()
	}()
	err := <-done
	fmt.Println(errors.Is(err, mutex.ErrNotOwner))
	fmt.Println(mu.Locked())
	mu.Unlock()
	fmt.Println(mu.Locked())
	// Output:
	// true
	// true
	// false
}

// TryLock fails while the mutex is held, even for the holder.
func ExampleMutex_TryLock() {
	var mu mutex.Mutex
	fmt.Println(mu.TryLock())
	fmt.Println(mu.TryLock())
	mu.Unlock()
	// Output:
	// true
	// false
}

func ExampleMutex_LockContext() {
	var mu mutex.Mutex
	mu.Lock()
	defer mu.Unlock()

	done := make(chan error)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		done <- mu.LockContext(ctx)
	}()
	fmt.Println(<-done)
	// Output: context deadline exceeded
}

// LockTimeout gives up after a time limit, as Java's tryLock(timeout) and
// C#'s Monitor.TryEnter(obj, timeout) do; the holder locking again panics.
func ExampleMutex_LockTimeout() {
	var mu mutex.Mutex // the zero value is an unlocked mutex

	mu.Lock()
	got := make(chan bool)
	go func() { got <- mu.LockTimeout(10 * time.Millisecond) }()
	fmt.Println("another goroutine got it:", <-got)

	defer func() {
		err := recover().(error)
		fmt.Println("recursive locking:", errors.Is(err, mutex.ErrRecursiveLock))
		mu.Unlock() // still held by this goroutine: the misuse changed nothing
	}()
	mu.Lock() // the holder locking again panics at once instead of hanging
	// Output:
	// another goroutine got it: false
	// recursive locking: true
}

// A read lock taken again by the goroutine that holds it: sync.RWMutex
// hangs there only when a writer arrives in between; an RWMutex panics on
// every run.
func ExampleRWMutex_RLock() {
	var (
		mu    mutex.RWMutex
		table = map[string]int{"a": 1, "b": 2} // guarded by mu
	)
	get := func(k string) int {
		mu.RLock()
		defer mu.RUnlock()
		return table[k]
	}
	sum := func() (n int, err error) {
		mu.RLock()
		defer mu.RUnlock()
		defer func() {
			if v := recover(); v != nil {
				err = v.(error)
			}
		}()
		return get("a") + get("b"), nil // get read-locks again
	}
	_, err := sum()
	fmt.Println(errors.Is(err, mutex.ErrRecursiveLock))
	fmt.Println(strings.Contains(err.Error(), "recursive read locking"))
	fmt.Println(mu.Readers(), mu.Locked())
	// Output:
	// true
	// true
	// 0 false
}

func ExampleRWMutex() {
	var mu mutex.RWMutex // the zero value is unlocked
	mu.RLock()
	defer mu.RUnlock()
	defer func() {
		err := recover().(error)
		fmt.Println(errors.Is(err, mutex.ErrRecursiveLock), mu.Readers())
	}()
	mu.RLock() // read-locking again: sync.RWMutex deadlocks here if a writer waits in between
	// Output:
	// true 1
}
