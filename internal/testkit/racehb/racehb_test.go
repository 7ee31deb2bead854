//go:build race

package racehb

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/condvar"
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
	"park":   func() { parkShape(false) },
	"synced": func() { parkShape(true) },
	"cond":   func() { condShape(false) },
	"condok": func() { condShape(true) },
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

// condShape is parkShape with Cond waits: A writes y and waits on c1
// (bound to l1); once A is parked, B waits on c2 (bound to l2); once B is
// parked, s1 signals c1 and s2 signals c2, and B reads y after its wait.
// Each Cond has a signaller of its own, so that nothing but the library
// could order A before B; if synced, a channel does.
func condShape(synced bool) {
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
	go func() { defer wg.Done(); condA(&l1, c1, done) }()
	go func() { defer wg.Done(); condB(&l2, c2, &goB, done, synced) }()
	awaitParked("racehb.condA")
	goB.set()
	awaitParked("racehb.condB")
	release.set()
	wg.Wait()
}

//go:noinline
func condA(l *mutex.Mutex, c *condvar.Cond, done chan struct{}) {
	l.Lock()
	y = 1
	close(done)
	c.Wait()
	l.Unlock()
}

//go:noinline
func condB(l *mutex.Mutex, c *condvar.Cond, goB *signal, done chan struct{}, synced bool) {
	goB.wait()
	l.Lock()
	c.Wait()
	l.Unlock()
	if synced {
		<-done
	}
	_ = y
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

// TestParkOrdersNoOtherLock: two goroutines that park on different locks
// are not ordered by the race detector, so the race between them is
// reported once, in Off and Cycles modes. (Order mode's per-goroutine
// bookkeeping still orders them; it is not asserted.)
func TestParkOrdersNoOtherLock(t *testing.T) {
	for _, mode := range []string{"off", "cycles"} {
		if n := races(t, "park", mode); n != 1 {
			t.Errorf("park shape in %s mode: %d data races reported, want 1", mode, n)
		}
	}
}

// TestParkSyncedNoRace: with the two goroutines ordered by a channel,
// the same shape reports no race, in every mode.
func TestParkSyncedNoRace(t *testing.T) {
	for _, mode := range []string{"off", "cycles", "order"} {
		if n := races(t, "synced", mode); n != 0 {
			t.Errorf("synced shape in %s mode: %d data races reported, want 0", mode, n)
		}
	}
}

// TestCondWaitOrdersNoOtherCond: the same for two goroutines that park
// in waits on different Conds, each the first wait of its Cond, in every
// mode.
func TestCondWaitOrdersNoOtherCond(t *testing.T) {
	for _, mode := range []string{"off", "cycles", "order"} {
		if n := races(t, "cond", mode); n != 1 {
			t.Errorf("cond shape in %s mode: %d data races reported, want 1", mode, n)
		}
	}
}

// TestCondWaitSyncedNoRace: with the two ordered by a channel, the Cond
// shape reports no race.
func TestCondWaitSyncedNoRace(t *testing.T) {
	for _, mode := range []string{"off", "cycles", "order"} {
		if n := races(t, "condok", mode); n != 0 {
			t.Errorf("condok shape in %s mode: %d data races reported, want 0", mode, n)
		}
	}
}
