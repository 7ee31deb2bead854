//go:build race

package racehb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/condvar"
	_ "github.com/locksmith-go/locksmith/detect" // the engine, the watchdog and Cond watch, as a program that uses detect has them
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/mutex"
)

// shapeEnv names the shape a child process runs.
const shapeEnv = "LOCKSMITH_RACEHB_SHAPE"

func TestMain(m *testing.M) {
	if s := os.Getenv(shapeEnv); s != "" {
		shapes[s]()
		os.Exit(0) // the race detector makes it 66 if it reported a race
	}
	goleak.VerifyTestMain(m)
}

var shapes = map[string]func(){
	"park":    func() { parkShape(false) },
	"synced":  func() { parkShape(true) },
	"cond":    func() { condShape(false, false) },
	"condok":  func() { condShape(true, false) },
	"condq":   func() { condShape(false, true) },
	"condqok": func() { condShape(true, true) },
	"slot":    func() { slotShape(false, core.CondTableSize) },
	"slotok":  func() { slotShape(true, core.CondTableSize) },
	"dom":     func() { slotShape(false, core.DomCacheSize) },
	"domok":   func() { slotShape(true, core.DomCacheSize) },
	"alone":   func() { aloneShape(false, false, false) },
	"aloneok": func() { aloneShape(true, false, false) },
	"rw":      func() { aloneShape(false, true, false) },
	"rwok":    func() { aloneShape(true, true, false) },
	"nest":    func() { aloneShape(false, false, true) },
	"nestok":  func() { aloneShape(true, false, true) },
}

// y is what the shape's two goroutines race on.
var y int

// signal is a barrier the race detector does not see: its atomics run with
// the goroutine's synchronization ignored, so a wait on it orders the two
// goroutines in time, never for the detector.
type signal struct{ v atomic.Bool }

func (s *signal) set() {
	runtime.RaceDisable()
	s.v.Store(true)
	runtime.RaceEnable()
}

func (s *signal) wait() {
	runtime.RaceDisable()
	for !s.v.Load() {
		runtime.Gosched()
	}
	runtime.RaceEnable()
}

// awaitParked returns once a goroutine whose stack holds fn is blocked
// (not running or runnable). The goroutine dump is the runtime's, which
// the race detector does not see either.
func awaitParked(fn string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			head, _, _ := strings.Cut(g, "\n")
			if strings.Contains(g, fn) && !strings.Contains(head, "[running") && !strings.Contains(head, "[runnable") {
				return
			}
		}
		runtime.Gosched()
	}
}

// parkShape: goroutine A writes y, then parks on l1, held by h1; once A
// is parked, goroutine B parks on l2, held by h2; once B is parked the
// holders let go, and B reads y. Nothing orders A's write before B's read
// but, if synced, a channel A closes after its write and B receives from
// before its read: the barriers that order the steps in time are
// invisible to the race detector.
func parkShape(synced bool) {
	var l1, l2 mutex.Mutex
	var held1, held2, goB, release signal
	done := make(chan struct{})
	var wg sync.WaitGroup
	hold := func(l *mutex.Mutex, held *signal) {
		defer wg.Done()
		l.Lock()
		held.set()
		release.wait()
		l.Unlock()
	}
	wg.Add(4)
	go hold(&l1, &held1)
	go hold(&l2, &held2)
	go func() { defer wg.Done(); parkA(&l1, &held1, done) }()
	go func() { defer wg.Done(); parkB(&l2, &held2, &goB, done, synced) }()
	awaitParked("racehb.parkA")
	goB.set()
	awaitParked("racehb.parkB")
	release.set()
	wg.Wait()
}

//go:noinline
func parkA(l *mutex.Mutex, held *signal, done chan struct{}) {
	held.wait()
	y = 1
	close(done)
	l.Lock()
	l.Unlock()
}

//go:noinline
func parkB(l *mutex.Mutex, held, goB *signal, done chan struct{}, synced bool) {
	held.wait()
	goB.wait()
	l.Lock()
	l.Unlock()
	if synced {
		<-done
	}
	_ = y
}

// aloneShape: goroutine A writes y, then takes and releases l1, a lock
// it takes alone (holding no other lock, and nobody waits); once A is
// done, goroutine B takes and releases l2 the same way and reads y. With
// rw the locks are RWMutexes, A write-locks and B read-locks. If nest, A
// takes a lock of its own under l1 (a nesting, which Order mode records
// in its lock-order graph), and B still takes l2 alone. As in parkShape,
// nothing orders A's write before B's read but, if synced, a channel.
func aloneShape(synced, rw, nest bool) {
	var l1, l2 mutex.RWMutex
	var m1, m2, inner mutex.Mutex
	var aDone signal
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		y = 1
		close(done)
		if rw {
			l1.Lock()
			l1.Unlock()
		} else {
			m1.Lock()
			if nest {
				inner.Lock()
				inner.Unlock()
			}
			m1.Unlock()
		}
		aDone.set()
	}()
	go func() {
		defer wg.Done()
		aDone.wait()
		if rw {
			l2.RLock()
			l2.RUnlock()
		} else {
			m2.Lock()
			m2.Unlock()
		}
		if synced {
			<-done
		}
		_ = y
	}()
	wg.Wait()
}

// condShape is parkShape with Cond waits: A writes y and waits on c1
// (bound to l1); once A is parked, B waits on c2 (bound to l2); once B is
// parked, s1 signals c1 and s2 signals c2, and B reads y after its wait.
// Each Cond has a signaller of its own, so that nothing but the library
// could order A before B; if synced, a channel does. If timed, the waits
// are WaitTimeout's (queued waits, registered in the registry's table)
// rather than Wait's (ticket waits, registered in the Cond).
func condShape(synced, timed bool) {
	var l1, l2 mutex.Mutex
	c1, c2 := condvar.New(&l1), condvar.New(&l2)
	var goB, release signal
	done := make(chan struct{})
	var wg sync.WaitGroup
	signaller := func(c *condvar.Cond) {
		defer wg.Done()
		release.wait()
		c.Signal()
	}
	wg.Add(4)
	go signaller(c1)
	go signaller(c2)
	go func() { defer wg.Done(); condA(&l1, c1, done, timed) }()
	go func() { defer wg.Done(); condB(&l2, c2, &goB, done, synced, timed) }()
	awaitParked("racehb.condA")
	goB.set()
	awaitParked("racehb.condB")
	release.set()
	wg.Wait()
}

//go:noinline
func condA(l *mutex.Mutex, c *condvar.Cond, done chan struct{}, timed bool) {
	l.Lock()
	y = 1
	close(done)
	condWait(c, timed)
	l.Unlock()
}

func condWait(c *condvar.Cond, timed bool) {
	if !timed {
		c.Wait()
	} else if !c.WaitTimeout(time.Hour) {
		panic("WaitTimeout timed out")
	}
}

//go:noinline
func condB(l *mutex.Mutex, c *condvar.Cond, goB *signal, done chan struct{}, synced, timed bool) {
	goB.wait()
	l.Lock()
	condWait(c, timed)
	l.Unlock()
	if synced {
		<-done
	}
	_ = y
}

// gid returns the calling goroutine's ID, from its stack's header.
func gid() int64 {
	var buf [64]byte
	f := strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))
	g, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		panic(err)
	}
	return g
}

// slotShape: A writes y, then waits on c1 with a timeout (a queued wait,
// registered in the registry's table of Cond waits) and is signalled;
// once A's wait is over, B, a goroutine whose ID takes A's slot of the
// table (the same ID modulo mod, the table's size), waits on c2 the same
// way, is signalled and reads y. If synced, a channel orders A's write
// before B's read. With mod the size of the domain cache (a multiple of
// the table's), B also takes A's slot of that cache.
func slotShape(synced bool, mod int64) {
	var l1, l2 mutex.Mutex
	c1, c2 := condvar.New(&l1), condvar.New(&l2)
	var aDone signal
	done := make(chan struct{})
	var wg sync.WaitGroup
	signalWhenParked := func(c *condvar.Cond, fn string) {
		defer wg.Done()
		awaitParked(fn)
		c.Signal()
	}
	ga := make(chan int64, 1) // A's ID, sent before A writes y
	wg.Add(2)
	go signalWhenParked(c1, "racehb.condA")
	finish := make(chan struct{}) // closed by B once it has read y: orders nothing before that
	go func() {
		defer wg.Done()
		ga <- gid()
		condA(&l1, c1, done, true)
		aDone.set()
		// A stays until B has read y: the race runtime may count the
		// accesses of an exited goroutine as those of a later goroutine
		// that reuses its slot, and then misses the race.
		<-finish
	}()
	target := <-ga % mod
	aDone.wait()
	for {
		var picked, verdict signal
		wg.Add(1)
		go func() {
			defer wg.Done()
			if gid()%mod != target {
				verdict.set()
				return
			}
			picked.set()
			verdict.set()
			wg.Add(1)
			go signalWhenParked(c2, "racehb.condB")
			var goB signal
			goB.set()
			condB(&l2, c2, &goB, done, synced, true)
			close(finish)
		}()
		verdict.wait()
		if picked.v.Load() {
			break
		}
	}
	wg.Wait()
}

// races runs shape in a child process in the given detection mode and
// returns how many data races the child reported.
func races(t *testing.T, shape, mode string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), shapeEnv+"="+shape, "LOCKSMITH_DETECT="+mode, "GORACE=halt_on_error=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	n := strings.Count(out.String(), "WARNING: DATA RACE")
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 66 && n > 0 {
		err = nil // the race detector's exit code for a run that reported
	}
	if err != nil {
		t.Fatalf("%s in %s mode: %v\n%s", shape, mode, err, out.String())
	}
	return n
}

// The shapes with a race and the modes in which it must be reported once.
var racy = []struct {
	shape string
	modes []string
}{
	{"alone", []string{"off", "cycles", "order"}},
	{"rw", []string{"off", "cycles", "order"}},
	{"nest", []string{"off", "cycles", "order"}},
	{"park", []string{"off", "cycles", "order"}},
	{"cond", []string{"off", "cycles", "order"}},
	{"condq", []string{"off", "cycles", "order"}},
	{"slot", []string{"cycles", "order"}}, // off registers no Cond wait
	{"dom", []string{"off", "cycles", "order"}},
}

// attempts is how many runs of a racy shape may report nothing before
// the test fails. A run of the slot shapes, which start hundreds of
// goroutines, now and then reports nothing (about one in twenty, more
// under load; the cause is not the orderings these tests are for, which
// hid the race in every run); the other shapes have not been seen to.
const attempts = 3

// TestWaitsOrderNoOtherLock: two goroutines that park on different locks,
// or wait on different Conds, or one after the other in the same slot
// of the table of Cond waits or of the domain cache, are not ordered by
// the race detector, so the race between them is reported once: in one
// of attempts runs at least, and never more than once.
func TestWaitsOrderNoOtherLock(t *testing.T) {
	for _, c := range racy {
		for _, mode := range c.modes {
			var got []int
			for range attempts {
				n := races(t, c.shape, mode)
				got = append(got, n)
				if n != 0 {
					break
				}
			}
			if n := got[len(got)-1]; n != 1 {
				t.Errorf("%s shape in %s mode: data races reported in each run: %v, want 1", c.shape, mode, got)
			}
		}
	}
}

// TestSyncedNoRace: with the two goroutines ordered by a channel, the
// same shapes report no race, in every mode.
func TestSyncedNoRace(t *testing.T) {
	for _, shape := range []string{"synced", "condok", "condqok", "slotok", "domok", "aloneok", "rwok", "nestok"} {
		for _, mode := range []string{"off", "cycles", "order"} {
			if n := races(t, shape, mode); n != 0 {
				t.Errorf("%s shape in %s mode: %d data races reported, want 0", shape, mode, n)
			}
		}
	}
}
