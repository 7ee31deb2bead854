//go:build goexperiment.goroutineleakprofile && !purego

package leakprof_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// rwLocker is what mutex.RWMutex and monitor.RWMonitor share here.
type rwLocker interface {
	sync.Locker
	RLock()
	RUnlock()
}

// A scenario blocks one goroutine, the waiter, on a lock or Cond for as
// long as another, the releaser, is blocked receiving from a channel.
type scenario struct {
	name string
	// make makes the lock (or Cond) and returns what the goroutines of
	// start run on it: the waiter's blocking call (block) and its call
	// after (after); the releaser's call before it blocks (hold: it holds
	// what the waiter waits for) and after (let: it lets the waiter
	// through); and where the waiter parks.
	make func() (block, hold, let, after func(), park parkAt)
}

// parkAt is where a goroutine is blocked: one of the states, with frame on
// its stack.
type parkAt struct {
	states []string
	frame  string
}

// lockPark is the park of a waiter in a locksmith lock's slow path: on its
// channel (a select when it can also give up, else a receive).
var lockPark = parkAt{[]string{"select", "chan receive"}, "locksmith/internal/core.(*parker).park"}

func lockScenario(name string, mk func() sync.Locker) scenario {
	return scenario{name: name, make: func() (block, hold, let, after func(), park parkAt) {
		l := mk()
		return l.Lock, l.Lock, l.Unlock, l.Unlock, lockPark
	}}
}

// readScenario blocks a reader behind a writer.
func readScenario(name string, mk func() rwLocker) scenario {
	return scenario{name: name, make: func() (block, hold, let, after func(), park parkAt) {
		l := mk()
		return l.RLock, l.Lock, l.Unlock, l.RUnlock, lockPark
	}}
}

// drainScenario blocks a writer, which takes the writer lock and then
// waits for the reader to leave.
func drainScenario(name string, mk func() rwLocker) scenario {
	return scenario{name: name, make: func() (block, hold, let, after func(), park parkAt) {
		l := mk()
		return l.Lock, l.RLock, l.RUnlock, l.Unlock, lockPark
	}}
}

// condScenario blocks a waiter in a wait on a Cond (Wait, or WaitContext
// on a context that only the waiter and the releaser hold: a wait with a
// callback, on the Cond's queue of waiter records rather than its ticket
// list), with nothing held by the releaser: it signals once let through.
func condScenario(name string, mk func() sync.Locker, withContext bool) scenario {
	return scenario{name: name, make: func() (block, hold, let, after func(), park parkAt) {
		mu := mk()
		c := condvar.New(mu)
		ctx, cancel := context.WithCancel(context.Background())
		var signalled bool
		park = parkAt{[]string{"sync.Cond.Wait"}, "locksmith/condvar.(*Cond).Wait"}
		wait := c.Wait
		if withContext {
			park.frame = "locksmith/condvar.(*Cond).WaitContext"
			wait = func() {
				if err := c.WaitContext(ctx); err != nil {
					panic(err)
				}
			}
		}
		block = func() {
			mu.Lock()
			for !signalled {
				wait()
			}
			mu.Unlock()
		}
		let = func() {
			mu.Lock()
			signalled = true
			c.Signal()
			mu.Unlock()
			cancel()
		}
		return block, func() {}, let, func() {}, park
	}}
}

var scenarios = []scenario{
	lockScenario("Mutex", func() sync.Locker { return new(mutex.Mutex) }),
	lockScenario("Monitor", func() sync.Locker { return new(monitor.Monitor) }),
	lockScenario("RWMutex/write-behind-writer", func() sync.Locker { return new(mutex.RWMutex) }),
	lockScenario("RWMonitor/write-behind-writer", func() sync.Locker { return new(monitor.RWMonitor) }),
	readScenario("RWMutex/read-behind-writer", func() rwLocker { return new(mutex.RWMutex) }),
	readScenario("RWMonitor/read-behind-writer", func() rwLocker { return new(monitor.RWMonitor) }),
	drainScenario("RWMutex/write-behind-reader", func() rwLocker { return new(mutex.RWMutex) }),
	drainScenario("RWMonitor/write-behind-reader", func() rwLocker { return new(monitor.RWMonitor) }),
	condScenario("Cond/Mutex", func() sync.Locker { return new(mutex.Mutex) }, false),
	condScenario("Cond/Monitor", func() sync.Locker { return new(monitor.Monitor) }, false),
	condScenario("Cond/WaitContext", func() sync.Locker { return new(mutex.Mutex) }, true),
}

var modes = []detect.Mode{detect.Off, detect.Cycles, detect.Order}

// stuck is one goroutine a scenario blocked.
type stuck struct {
	role string
	p    *testutil.Proc
	park parkAt
}

// start runs sc: the releaser, which takes what the waiter waits for
// and then blocks receiving from release; the waiter, which blocks (in a
// sync.Once's Do, then closes a channel and calls a WaitGroup's Done);
// and, behind the waiter, a goroutine in the same Once's Do, one
// receiving from the channel and one in the WaitGroup's Wait. It returns
// once every goroutine is blocked where it should be.
//
// Nothing start leaves on the caller's stack reaches the lock: with a
// release channel that only the releaser holds, every goroutine started
// is blocked for good and unreachable, exactly as with package sync's
// types.
//
//go:noinline
func start(t *testing.T, sc scenario, release <-chan struct{}) []stuck {
	t.Helper()
	block, hold, let, after, park := sc.make()
	held := make(chan struct{})
	releaser := testutil.Spawn(func() {
		hold()
		close(held)
		<-release
		let()
	})
	testutil.Await(t, held, "releaser holding")
	// One object, with pointers: a sync.Once alone is a tiny allocation,
	// which may share its block with a live object, and the collector
	// marks blocks.
	b := &struct {
		once sync.Once
		wg   sync.WaitGroup
		done chan struct{}
	}{done: make(chan struct{})}
	b.wg.Add(1)
	waiter := testutil.Spawn(func() {
		defer b.wg.Done()
		b.once.Do(func() {
			block()
			after()
		})
		close(b.done)
	})
	all := []stuck{
		{"releaser", releaser, parkAt{[]string{"chan receive"}, "leakprof_test.start.func"}},
		{"waiter", waiter, park},
	}
	waitParked(t, all[1])
	all = append(all,
		stuck{"behind on a channel", testutil.Spawn(func() { <-b.done }), parkAt{[]string{"chan receive"}, "leakprof_test.start.func"}},
		stuck{"behind in a WaitGroup's Wait", testutil.Spawn(b.wg.Wait), parkAt{[]string{"sync.WaitGroup.Wait"}, "sync.(*WaitGroup).Wait"}},
		stuck{"behind in a Once's Do", testutil.Spawn(func() { b.once.Do(func() {}) }), parkAt{[]string{"sync.Mutex.Lock"}, "sync.(*Once).doSlow"}},
	)
	for _, s := range all {
		waitParked(t, s)
	}
	return all
}

// waitParked waits until s's goroutine is blocked in one of its park's
// states with its frame on the stack.
func waitParked(t *testing.T, s stuck) {
	t.Helper()
	g := s.p.ID(t)
	var last string
	deadline := time.Now().Add(testutil.Liveness)
	for {
		state, stack, ok := testutil.GoroutineDump(g)
		if ok && slices.Contains(s.park.states, state) && strings.Contains(stack, s.park.frame) {
			return
		}
		last = fmt.Sprintf("state %q:\n%s", state, stack)
		if time.Now().After(deadline) {
			t.Fatalf("%s (goroutine %d) not parked in %v with %s after %v; last seen %s",
				s.role, g, s.park.states, s.park.frame, testutil.Liveness, last)
		}
		runtime.Gosched()
	}
}

var header = regexp.MustCompile(`(?m)^goroutine (\d+)[^\[\n]*\[([^\]\n]*)\]`)

// leaked writes the goroutine leak profile, which runs a collection that
// finds the leaked goroutines, and returns the state of every goroutine
// then: whether the profile marked it leaked, and the dump.
func leaked(t *testing.T) (map[int64]bool, string) {
	t.Helper()
	p := pprof.Lookup("goroutineleak")
	if p == nil {
		t.Fatal(`no "goroutineleak" profile, though built with GOEXPERIMENT=goroutineleakprofile`)
	}
	var b bytes.Buffer
	if err := p.WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	out := map[int64]bool{}
	for _, m := range header.FindAllStringSubmatch(b.String(), -1) {
		g, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out[g] = strings.Contains(m[2], "(leaked)")
	}
	return out, b.String()
}

// stackIn returns goroutine g's stack in dump, or "".
func stackIn(dump string, g int64) string {
	head := "goroutine " + strconv.FormatInt(g, 10) + " "
	for _, block := range strings.Split(dump, "\n\n") {
		if strings.HasPrefix(block, head) {
			return block
		}
	}
	return ""
}

// forEachMode runs f once per detection mode, the watchdog off.
func forEachMode(t *testing.T, f func(t *testing.T)) {
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
			f(t)
		})
	}
}

// TestLeakProfileMarksStuckWaiters: a goroutine blocked for good on a
// lock or Cond that no runnable goroutine reaches is marked leaked, and so
// is every goroutine stuck behind it, in every mode and for every type.
func TestLeakProfileMarksStuckWaiters(t *testing.T) {
	forEachMode(t, func(t *testing.T) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				all := start(t, sc, make(chan struct{}))
				keepStuck()
				got, dump := leaked(t)
				for _, s := range all {
					if !got[s.p.G] {
						t.Errorf("%s (goroutine %d) not marked leaked", s.role, s.p.G)
					}
				}
				if t.Failed() {
					for _, s := range all {
						t.Logf("%s:\n%s", s.role, stackIn(dump, s.p.G))
					}
				}
			})
		}
	})
}

// TestLeakProfileSparesReachableWaiters: goroutines blocked on a lock or
// Cond that a runnable goroutine (the test's, which holds the releaser's
// channel) can still reach are not marked leaked, and they all finish
// once released.
func TestLeakProfileSparesReachableWaiters(t *testing.T) {
	forEachMode(t, func(t *testing.T) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				release := make(chan struct{})
				all := start(t, sc, release)
				got, dump := leaked(t)
				for _, s := range all {
					if got[s.p.G] {
						t.Errorf("%s (goroutine %d) marked leaked, though reachable", s.role, s.p.G)
					}
				}
				if t.Failed() {
					t.Logf("profile:\n%s", dump)
				}
				close(release)
				for _, s := range all {
					if v := s.p.Wait(t); v != nil {
						t.Errorf("%s panicked: %v", s.role, v)
					}
				}
			})
		}
	})
}

// TestLeakProfileWhileScansOverlapCollections: the scans that run from a
// cleanup after every collection (the registry of lock metadata's, which
// finds collected locks, and, in Order mode, the sweep of held records)
// run while the next collection marks, here the leak profile's own,
// since collections follow each other without pause; they must not make
// the locks they look at reachable, or no goroutine blocked on one is
// marked leaked. Many live locks with metadata make each scan long.
func TestLeakProfileWhileScansOverlapCollections(t *testing.T) {
	forEachMode(t, func(t *testing.T) {
		live := make([]*mutex.Mutex, 20_000)
		restore := detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))
		for i := range live {
			live[i] = new(mutex.Mutex)
			live[i].Lock() // in Order mode: metadata
			live[i].Unlock()
		}
		restore()
		var all []stuck
		for _, sc := range scenarios {
			all = append(all, start(t, sc, make(chan struct{}))...)
		}
		keepStuck()
		stop := make(chan struct{})
		collector := testutil.Spawn(func() {
			for {
				select {
				case <-stop:
					return
				default:
					runtime.GC()
				}
			}
		})
		for round := range 5 {
			got, _ := leaked(t)
			for _, s := range all {
				if !got[s.p.G] {
					t.Errorf("round %d: %s (goroutine %d) not marked leaked", round, s.role, s.p.G)
				}
			}
		}
		close(stop)
		collector.Wait(t)
		runtime.KeepAlive(live)
	})
}

// TestLeakProfileWithWatchdog: the wait-timeout watchdog's scan, which
// runs unasked every quarter of the timeout, here all through the
// profile's collections, resolves the lock of a wait only to report it,
// once: waits it reported before the profile stay marked leaked.
func TestLeakProfileWithWatchdog(t *testing.T) {
	// Off mode reports nothing. marked counts the registered waits that
	// an earlier subtest's watchdog took as overdue.
	marked := 0
	for _, m := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
			var all []stuck
			for _, sc := range scenarios {
				if !strings.HasPrefix(sc.name, "Cond/") { // a Cond wait is no lock wait
					all = append(all, start(t, sc, make(chan struct{}))...)
				}
			}
			keepStuck()
			// Every registered wait, earlier tests' too, is overdue at
			// once, and taken once (those an earlier subtest's watchdog
			// took are not again); each is counted in the tally of the
			// problem it is reported under (reports of one site are one
			// problem).
			registered := 0
			core.Waiting(func(core.WaitInfo) { registered++ })
			rec := detecttest.NewRecorder()
			defer detect.Configure(detect.WithWaitTimeout(4*time.Millisecond), detect.WithReporter(rec.Add))()
			testutil.WaitFor(t, "every wait taken as overdue", func() bool {
				n := 0
				for _, r := range rec.All(detect.WaitTimeout) {
					n += r.Seen().Times
				}
				return n >= registered-marked
			})
			marked = registered
			// The scan that took them may hold their locks until it
			// returns, as any running goroutine may.
			testutil.WaitFor(t, "the reporting scan returned", func() bool {
				return !strings.Contains(testutil.AllStacks(), "locksmith/detect.scan(")
			})
			for round := range 5 {
				got, _ := leaked(t)
				for _, s := range all {
					if !got[s.p.G] {
						t.Errorf("round %d: %s (goroutine %d) not marked leaked", round, s.role, s.p.G)
					}
				}
			}
		})
	}
}
