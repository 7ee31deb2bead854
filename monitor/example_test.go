package monitor_test

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
)

// An account whose methods lock its Monitor and call each other: the
// owner re-enters instead of deadlocking.
type account struct {
	mu      monitor.Monitor
	balance int // guarded by mu
}

func (a *account) Deposit(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance += n
}

func (a *account) DepositTwice(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Deposit(n) // re-enters a.mu
	a.Deposit(n)
}

func ExampleMonitor() {
	var a account
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.DepositTwice(10)
		}()
	}
	wg.Wait()
	fmt.Println(a.balance)
	// Output: 100
}

func ExampleMonitor_HoldCount() {
	var m monitor.Monitor
	m.Lock()
	m.Lock()
	fmt.Println(m.HoldCount())
	m.Unlock()
	fmt.Println(m.HoldCount(), m.Locked())
	m.Unlock()
	fmt.Println(m.HoldCount(), m.Locked())
	// Output:
	// 2
	// 1 true
	// 0 false
}

// TryLock succeeds for the owner, adding a hold.
func ExampleMonitor_TryLock() {
	var m monitor.Monitor
	fmt.Println(m.TryLock(), m.TryLock(), m.HoldCount())
	m.Unlock()
	m.Unlock()
	// Output: true true 2
}

// Do releases the monitor even when the function panics.
func ExampleMonitor_Do() {
	var m monitor.Monitor
	func() {
		defer func() { fmt.Println("recovered:", recover()) }()
		m.Do(func() { panic("oops") })
	}()
	fmt.Println(m.Locked())
	// Output:
	// recovered: oops
	// false
}

// A Java-style bounded queue on the Monitor's implicit condition.
func ExampleMonitor_Wait() {
	var (
		m     monitor.Monitor
		queue []int // guarded by m
	)
	const capacity = 2
	put := func(v int) {
		m.Lock()
		defer m.Unlock()
		for len(queue) == capacity {
			m.Wait()
		}
		queue = append(queue, v)
		m.NotifyAll()
	}
	take := func() int {
		m.Lock()
		defer m.Unlock()
		for len(queue) == 0 {
			m.Wait()
		}
		v := queue[0]
		queue = queue[1:]
		m.NotifyAll()
		return v
	}
	go func() {
		for i := 1; i <= 5; i++ {
			put(i)
		}
	}()
	sum := 0
	for range 5 {
		sum += take()
	}
	fmt.Println(sum)
	// Output: 15
}

// WaitTimeout reports false when nobody notifies in time; the hold count
// is restored either way.
func ExampleMonitor_WaitTimeout() {
	var m monitor.Monitor
	m.Lock()
	m.Lock()
	fmt.Println(m.WaitTimeout(10*time.Millisecond), m.HoldCount())
	m.Unlock()
	m.Unlock()
	// Output: false 2
}

// Notify without holding the monitor panics with ErrNotOwner.
func ExampleMonitor_Notify() {
	var m monitor.Monitor
	defer func() {
		fmt.Println(errors.Is(recover().(error), monitor.ErrNotOwner))
	}()
	m.Notify()
	// Output: true
}
