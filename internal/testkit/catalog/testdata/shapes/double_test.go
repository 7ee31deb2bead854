package shapes

import (
	"fmt"
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/mutex"
)

// Double locking through a call chain: a method that holds the lock calls
// another that takes it again.

type account struct {
	mu      mutex.Mutex
	balance int
}

func (a *account) Balance() int       { a.mu.Lock(); defer a.mu.Unlock(); return a.balance }
func (a *account) balanceLocked() int { return a.balance }

func (a *account) depositBug(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance += n
	_ = a.Balance() // takes a.mu again
}

func (a *account) depositFixed(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.balance += n
	_ = a.balanceLocked()
}

func TestBugDoubleLockCallChain(t *testing.T)   { helper(t); new(account).depositBug(1) }
func TestFixedDoubleLockCallChain(t *testing.T) { helper(t); new(account).depositFixed(1) }

// Double locking inside a String method: a log line under the lock
// formats the value, and its String method locks it.

type counter struct {
	mu mutex.Mutex
	n  int
}

func (c *counter) String() string { c.mu.Lock(); defer c.mu.Unlock(); return fmt.Sprint(c.n) }

func (c *counter) incBug() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return fmt.Sprintf("now %v", c) // String locks c.mu
}

func (c *counter) incFixed() string {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return fmt.Sprintf("now %v", c)
}

func TestBugDoubleLockString(t *testing.T)   { helper(t); _ = new(counter).incBug() }
func TestFixedDoubleLockString(t *testing.T) { helper(t); _ = new(counter).incFixed() }

// Double locking inside sync.Once: a lazy initialiser takes the lock its
// first caller already holds.

type registry struct {
	mu    mutex.Mutex
	once  sync.Once
	items map[string]int
}

func (r *registry) init() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = map[string]int{}
}

func (r *registry) addBug(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.once.Do(r.init) // init takes r.mu
	r.items[k]++
}

func (r *registry) addFixed(k string) {
	r.once.Do(r.init)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items[k]++
}

func TestBugDoubleLockOnce(t *testing.T)   { helper(t); new(registry).addBug("a") }
func TestFixedDoubleLockOnce(t *testing.T) { helper(t); new(registry).addFixed("a") }

// An early return that skips the Unlock: the next call locks again.

type cache struct {
	mu mutex.Mutex
	m  map[string]string
}

func (c *cache) getBug(k string) (string, bool) {
	c.mu.Lock()
	v, ok := c.m[k]
	if !ok {
		return "", false // c.mu still held
	}
	c.mu.Unlock()
	return v, true
}

func (c *cache) getFixed(k string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func TestBugMissingUnlock(t *testing.T) {
	helper(t)
	c := &cache{m: map[string]string{}}
	c.getBug("a")
	c.getBug("a")
}

func TestFixedMissingUnlock(t *testing.T) {
	helper(t)
	c := &cache{m: map[string]string{}}
	c.getFixed("a")
	c.getFixed("a")
}

// Recursive RLock with a writer between: a reader takes the read lock
// again while a writer waits; writer preference blocks the second RLock
// behind the writer, which waits for the first.

func TestBugRecursiveRLock(t *testing.T) {
	helper(t)
	var rw mutex.RWMutex
	rw.RLock()
	writing := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		close(writing)
		rw.Lock()
		rw.Unlock()
		close(wrote)
	}()
	<-writing
	rw.RLock() // the second read hold, with the writer queued
	rw.RUnlock()
	rw.RUnlock()
	<-wrote
}

func TestFixedRecursiveRLock(t *testing.T) {
	helper(t)
	var rw mutex.RWMutex
	rw.RLock()
	writing := make(chan struct{})
	wrote := make(chan struct{})
	go func() {
		close(writing)
		rw.Lock()
		rw.Unlock()
		close(wrote)
	}()
	<-writing
	// the work that needed a second hold runs under the first
	rw.RUnlock()
	<-wrote
}

// A read-to-write upgrade: RLock, then Lock of the same lock, which waits
// for the caller's own read hold.

func TestBugUpgrade(t *testing.T) {
	helper(t)
	var rw mutex.RWMutex
	rw.RLock()
	rw.Lock()
	rw.Unlock()
	rw.RUnlock()
}

func TestFixedUpgrade(t *testing.T) {
	helper(t)
	var rw mutex.RWMutex
	rw.RLock()
	rw.RUnlock()
	rw.Lock()
	rw.Unlock()
}
