package shapes

import (
	"fmt"
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// lockPair takes first, says so, waits until the other goroutine holds
// its first lock, then takes second: the interleaving that closes an
// AB-BA cycle, forced with channels.
func lockPair(first, second sync.Locker, mine chan<- struct{}, theirs <-chan struct{}) {
	first.Lock()
	defer first.Unlock()
	close(mine)
	<-theirs
	second.Lock()
	second.Unlock()
}

// AB-BA across two goroutines, interleaved so that the deadlock forms.

func TestBugABBA(t *testing.T) {
	helper(t)
	var a, b mutex.Mutex
	ca, cb := make(chan struct{}), make(chan struct{})
	both(func() { lockPair(&a, &b, ca, cb) }, func() { lockPair(&b, &a, cb, ca) })
}

func TestFixedABBA(t *testing.T) {
	helper(t)
	var a, b mutex.Mutex
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() },
		func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
}

// AB-BA one goroutine after the other: no deadlock forms in this run,
// only the order inversion that another interleaving turns into one.

func TestBugABBASequential(t *testing.T) {
	helper(t)
	var a, b mutex.Mutex
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
	both(func() { b.Lock(); a.Lock(); a.Unlock(); b.Unlock() })
}

func TestFixedABBASequential(t *testing.T) {
	helper(t)
	var a, b mutex.Mutex
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
}

// A three-lock cycle across three goroutines, interleaved so that it
// forms.

func TestBugThreeCycle(t *testing.T) {
	helper(t)
	var a, b, c mutex.Mutex
	h := [3]chan struct{}{make(chan struct{}), make(chan struct{}), make(chan struct{})}
	all := make(chan struct{})
	go func() { <-h[0]; <-h[1]; <-h[2]; close(all) }()
	step := func(first, second sync.Locker, mine chan struct{}) func() {
		return func() {
			first.Lock()
			defer first.Unlock()
			close(mine)
			<-all
			second.Lock()
			second.Unlock()
		}
	}
	both(step(&a, &b, h[0]), step(&b, &c, h[1]), step(&c, &a, h[2]))
}

func TestFixedThreeCycle(t *testing.T) {
	helper(t)
	var a, b, c mutex.Mutex
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() },
		func() { b.Lock(); c.Lock(); c.Unlock(); b.Unlock() },
		func() { a.Lock(); c.Lock(); c.Unlock(); a.Unlock() })
}

// The three-lock cycle one goroutine after another.

func TestBugThreeCycleSequential(t *testing.T) {
	helper(t)
	var a, b, c mutex.Mutex
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
	both(func() { b.Lock(); c.Lock(); c.Unlock(); b.Unlock() })
	both(func() { c.Lock(); a.Lock(); a.Unlock(); c.Unlock() })
}

func TestFixedThreeCycleSequential(t *testing.T) {
	helper(t)
	var a, b, c mutex.Mutex
	both(func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
	both(func() { b.Lock(); c.Lock(); c.Unlock(); b.Unlock() })
	both(func() { a.Lock(); c.Lock(); c.Unlock(); a.Unlock() })
}

// AB-BA between two Monitors (reentrant locks), interleaved.

func TestBugMonitorABBA(t *testing.T) {
	helper(t)
	var a, b monitor.Monitor
	ca, cb := make(chan struct{}), make(chan struct{})
	both(func() { lockPair(&a, &b, ca, cb) }, func() { lockPair(&b, &a, cb, ca) })
}

func TestFixedMonitorABBA(t *testing.T) {
	helper(t)
	var a, b monitor.Monitor
	both(func() {
		a.Lock()
		b.Lock()
		a.Lock()
		a.Unlock()
		b.Unlock()
		a.Unlock()
	},
		func() { a.Lock(); b.Lock(); b.Unlock(); a.Unlock() })
}

// AB-BA through read-write locks: each goroutine read-locks one and
// write-locks the other; the read holds keep both writers out.

func TestBugRWCycle(t *testing.T) {
	helper(t)
	var a, b mutex.RWMutex
	ca, cb := make(chan struct{}), make(chan struct{})
	both(func() { lockPair(a.RLocker(), &b, ca, cb) }, func() { lockPair(b.RLocker(), &a, cb, ca) })
}

func TestFixedRWCycle(t *testing.T) {
	helper(t)
	var a, b mutex.RWMutex
	both(func() { a.RLock(); b.Lock(); b.Unlock(); a.RUnlock() },
		func() { a.Lock(); b.RLock(); b.RUnlock(); a.Unlock() })
}

// AB-BA through String methods: each goroutine logs the other's value
// under its own lock, and the value's String takes the other lock.

type node struct {
	mu   mutex.Mutex
	name string
}

func (n *node) String() string { n.mu.Lock(); defer n.mu.Unlock(); return n.name }

func TestBugABBAString(t *testing.T) {
	helper(t)
	x, y := &node{name: "x"}, &node{name: "y"}
	cx, cy := make(chan struct{}), make(chan struct{})
	step := func(self, other *node, mine chan struct{}, theirs chan struct{}) func() {
		return func() {
			self.mu.Lock()
			defer self.mu.Unlock()
			close(mine)
			<-theirs
			_ = fmt.Sprintf("%s linked to %v", self.name, other)
		}
	}
	both(step(x, y, cx, cy), step(y, x, cy, cx))
}

func TestFixedABBAString(t *testing.T) {
	helper(t)
	x, y := &node{name: "x"}, &node{name: "y"}
	step := func(self, other *node) func() {
		return func() {
			o := other.String()
			self.mu.Lock()
			defer self.mu.Unlock()
			_ = fmt.Sprintf("%s linked to %v", self.name, o)
		}
	}
	both(step(x, y), step(y, x))
}
