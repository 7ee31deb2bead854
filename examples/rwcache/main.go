// Rwcache shows the read-write locks of locksmith on two pieces of code
// that real programs contain.
//
// First, Java's ReentrantReadWriteLock "CachedData" idiom (from the
// class's documentation) ported to monitor.RWMonitor: read under the read
// lock; if the cache is stale, release the read lock and take the write
// lock (an RWMonitor, like Java, cannot upgrade in place: it refuses the
// upgrade with a panic where Java hangs), recheck, refresh, take the read
// lock again before releasing the write lock (a downgrade), and use the
// data.
//
// Second, the recursive read lock that Go programs keep shipping: a method
// that holds the read lock calls another that read-locks again. With
// sync.RWMutex it works in every test and hangs in production, when a
// writer arrives between the two RLocks (the writer waits for the first
// read lock, and the second RLock waits behind the writer). The demo makes
// the writer arrive there: with sync.RWMutex it hangs, which the demo
// shows and then undoes; with mutex.RWMutex it panics on every run, writer
// or not, naming the mistake; with monitor.RWMonitor re-entry is allowed
// and safe, the second RLock passing the waiting writer.
//
// Run it with
//
//	go run ./examples/rwcache
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(w io.Writer) error {
	if err := cachedDataDemo(w); err != nil {
		return err
	}
	return recursiveReadDemo(w)
}

// --- Java's CachedData ----------------------------------------------------

// CachedData is Java's example, with an RWMonitor for the
// ReentrantReadWriteLock.
type CachedData struct {
	rwl     monitor.RWMonitor
	data    string // guarded by rwl
	valid   bool   // guarded by rwl
	loads   int    // guarded by rwl (written with the write lock)
	version int    // guarded by rwl
}

// Process reads the data, refreshing it first if it is stale, and returns
// what use made of it.
func (c *CachedData) Process(use func(string) string) string {
	c.rwl.RLock()
	if !c.valid {
		// Must release the read lock before taking the write lock.
		c.rwl.RUnlock()
		c.rwl.Lock()
		// Recheck: another goroutine may have refreshed it meanwhile.
		if !c.valid {
			c.loads++
			c.version++
			c.data = fmt.Sprintf("data v%d", c.version)
			c.valid = true
		}
		// Downgrade: take the read lock before releasing the write lock.
		c.rwl.RLock()
		c.rwl.Unlock() // still holds the read lock
	}
	defer c.rwl.RUnlock()
	return use(c.data)
}

// Invalidate marks the data stale.
func (c *CachedData) Invalidate() {
	c.rwl.Lock()
	defer c.rwl.Unlock()
	c.valid = false
}

// upgradeInPlace is the mistake Process avoids: asking for the write lock
// while holding the read lock. Java's ReentrantReadWriteLock blocks there
// forever; an RWMonitor panics at once with ErrUpgrade.
func (c *CachedData) upgradeInPlace() (err error) {
	c.rwl.RLock()
	defer c.rwl.RUnlock()
	defer func() {
		if v := recover(); v != nil {
			err = v.(error)
		}
	}()
	c.rwl.Lock()
	c.rwl.Unlock()
	return nil
}

func cachedDataDemo(w io.Writer) error {
	fmt.Fprintln(w, "== Java's CachedData on a monitor.RWMonitor")
	var c CachedData
	var wg sync.WaitGroup
	results := make([]string, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = c.Process(func(d string) string { return d })
		}()
	}
	wg.Wait()
	c.rwl.RLock()
	loads := c.loads
	c.rwl.RUnlock()
	fmt.Fprintf(w, "8 concurrent readers saw %q; the data was loaded %d time(s)\n", results[0], loads)
	for _, r := range results {
		if r != results[0] {
			return fmt.Errorf("readers saw different data: %q", results)
		}
	}
	c.Invalidate()
	fmt.Fprintf(w, "after Invalidate: %q\n", c.Process(func(d string) string { return d }))

	err := c.upgradeInPlace()
	if !errors.Is(err, monitor.ErrUpgrade) {
		return fmt.Errorf("upgrade in place: got %v, want ErrUpgrade", err)
	}
	fmt.Fprintf(w, "Lock while holding the read lock (Java hangs): panic: %v\n\n", err)
	return nil
}

// --- The recursive read lock ------------------------------------------------

type rwLocker interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()
}

// Registry is code as it is found in real projects: Total holds the read
// lock and calls Get, which read-locks again.
type Registry struct {
	mu      rwLocker
	m       map[string]int
	between func() // called between the two read locks: where a writer can arrive
}

func (r *Registry) Get(k string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[k]
}

func (r *Registry) Total(keys ...string) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.between != nil {
		r.between()
	}
	t := 0
	for _, k := range keys {
		t += r.Get(k) // the recursive read lock
	}
	return t
}

func (r *Registry) Set(k string, v int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[k] = v
}

func newRegistry(mu rwLocker) *Registry {
	return &Registry{mu: mu, m: map[string]int{"a": 1, "b": 2, "c": 3}}
}

// withRacingWriter makes a writer call Set just after Total has taken its
// first read lock, and waits until the writer is blocked in Lock, so that
// Total's second RLock meets a waiting writer: the timing that production
// hits once in a while, made certain.
func withRacingWriter(r *Registry, writerLock string, wrote chan<- struct{}) {
	r.between = func() {
		r.between = nil
		go func() {
			r.Set("d", 4)
			close(wrote)
		}()
		waitBlocked(".(*Registry).Set", writerLock)
	}
}

func recursiveReadDemo(w io.Writer) error {
	fmt.Fprintln(w, "== A read lock taken again by its holder (Total calls Get)")

	// 1. sync.RWMutex, no writer: the bug is invisible.
	r := newRegistry(new(sync.RWMutex))
	fmt.Fprintf(w, "sync.RWMutex, no writer:        Total = %d (works: every test passes)\n", r.Total("a", "b", "c"))

	// 2. sync.RWMutex, a writer arrives between the two RLocks: a hang.
	var srw sync.RWMutex
	r = newRegistry(&srw)
	wrote := make(chan struct{})
	withRacingWriter(r, "sync.(*RWMutex).Lock", wrote)
	total := make(chan int)
	go func() { total <- r.Total("a", "b", "c") }()
	waitBlocked(".(*Registry).Get", "sync.(*RWMutex).RLock")
	fmt.Fprintln(w, "sync.RWMutex, racing writer:   deadlock: Total waits in Get's RLock behind the writer,")
	fmt.Fprintln(w, "                               which waits in Lock for Total's first read lock")
	rescueSync(&srw)
	fmt.Fprintf(w, "                               (undone from outside, which only sync's unowned read locks allow: Total = %d)\n", <-total)
	<-wrote

	// 3. mutex.RWMutex: the mistake panics on every run, writer or not.
	r = newRegistry(new(mutex.RWMutex))
	err := catch(func() { r.Total("a", "b", "c") })
	if !errors.Is(err, mutex.ErrRecursiveLock) {
		return fmt.Errorf("mutex.RWMutex: got %v, want ErrRecursiveLock", err)
	}
	fmt.Fprintf(w, "mutex.RWMutex, no writer:       panic: %v\n", err)

	// 4. monitor.RWMonitor: re-entry is allowed, and passes the waiting writer.
	r = newRegistry(new(monitor.RWMonitor))
	wrote = make(chan struct{})
	withRacingWriter(r, "monitor.(*RWMonitor).Lock", wrote)
	t := r.Total("a", "b", "c")
	<-wrote
	fmt.Fprintf(w, "monitor.RWMonitor, racing writer: Total = %d, then the writer ran: d = %d\n", t, r.Get("d"))
	return nil
}

// rescueSync undoes the sync.RWMutex deadlock from outside: a helper
// goroutine asks for a read lock (it queues behind the writer and is
// counted at once), then this goroutine releases the read lock that Total
// holds, on its behalf. The writer runs; when it unlocks, the helper's
// read lock takes the place of the one released, so that Total's own
// RUnlock later balances. It works only because sync.RWMutex does not
// record who holds a read lock.
func rescueSync(rw *sync.RWMutex) {
	go func() { rw.RLock() }() // exits holding it, for Total
	waitBlocked(".rescueSync.func1", "sync.(*RWMutex).RLock")
	rw.RUnlock()
}

// catch runs f and returns what it panicked with, as an error.
func catch(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = v.(error)
		}
	}()
	f()
	return nil
}

// waitBlocked waits until some goroutine's stack has frame in, blocked
// in block: a goroutine that is parked, not running. It gives up (and
// panics) after ten seconds.
func waitBlocked(in, block string) {
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			head, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, in) && strings.Contains(g, block) &&
				!strings.Contains(head, "[running]") && !strings.Contains(head, "[runnable]") {
				return
			}
		}
		if time.Now().After(deadline) {
			panic(fmt.Sprintf("rwcache: no goroutine blocked in %s within %s", block, in))
		}
		runtime.Gosched()
	}
}
