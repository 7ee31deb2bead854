package monitor_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
)

// An Account's methods lock its Monitor, as Java's synchronized methods
// do, and call each other: the owner re-enters instead of deadlocking.
type Account struct {
	mon     monitor.Monitor
	balance int // guarded by mon
}

func (a *Account) Balance() int {
	a.mon.Lock() // synchronized
	defer a.mon.Unlock()
	return a.balance
}

func (a *Account) Deposit(n int) {
	a.mon.Lock()
	defer a.mon.Unlock()
	a.balance += n
	a.mon.NotifyAll() // wake withdrawals waiting for funds
}

// Withdraw waits until the balance covers n.
func (a *Account) Withdraw(n int) {
	a.mon.Lock()
	defer a.mon.Unlock()
	for a.Balance() < n { // Balance re-enters a.mon: hold count 2
		a.mon.Wait() // releases every hold, restores the count
	}
	a.balance -= n
}

// Each transfer holds one account's monitor at a time, so two transfers in
// opposite directions cannot deadlock.
func ExampleMonitor() {
	var acct Account
	done := make(chan bool)
	go func() { acct.Withdraw(70); done <- true }() // waits for the funds
	acct.Deposit(100)
	<-done
	fmt.Println(acct.Balance())
	// Output: 30
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

// LockTimeout is Java's tryLock(timeout) and C#'s Monitor.TryEnter(obj,
// timeout); for the owner it re-enters at once.
func ExampleMonitor_LockTimeout() {
	var m monitor.Monitor
	m.Lock()
	fmt.Println(m.LockTimeout(time.Second), m.HoldCount())
	got := make(chan bool)
	go func() { got <- m.LockTimeout(10 * time.Millisecond) }()
	fmt.Println(<-got)
	m.Unlock()
	m.Unlock()
	// Output:
	// true 2
	// false
}

// Java's downgrade: take the write lock, update, take the read lock, and
// release the write lock; the goroutine goes on reading, and other readers
// may enter. Asking for the write lock while holding only the read lock
// panics with ErrUpgrade instead of hanging.
func ExampleRWMonitor() {
	var rw monitor.RWMonitor // the zero value is unlocked
	rw.Lock()
	rw.RLock()
	rw.Unlock() // downgraded: a reader now
	defer rw.RUnlock()
	defer func() { fmt.Println(errors.Is(recover().(error), monitor.ErrUpgrade)) }()
	fmt.Println(rw.WriteHoldCount(), rw.ReadHoldCount())
	rw.Lock() // read-to-write upgrade: Java's ReentrantReadWriteLock hangs here
	// Output:
	// 0 1
	// true
}
