// Package detecttest holds the test helpers that configure or observe the
// deadlock detector, shared by the tests of mutex, monitor, condvar and
// detect, and by the differential test in the bench module (which cannot
// see detect's export_test.go).
package detecttest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// BlockedOn returns the IDs of the goroutines registered as blocked on l,
// a locksmith lock, so that tests can wait for a goroutine to park without
// sleeping. A goroutine counts once it has registered, before its
// deadlock check.
func BlockedOn(l sync.Locker) []int64 {
	a, ok := core.Adapt(l)
	if !ok {
		panic(fmt.Sprintf("detecttest: %T is not a locksmith lock", l))
	}
	var gs []int64
	core.Waiting(func(wi core.WaitInfo) {
		if wi.Lock == a.Lock {
			gs = append(gs, wi.G)
		}
	})
	return gs
}

// WaitParked waits until goroutine g is parked in a locksmith lock's slow
// path waiting for l: registered as blocked on l and asleep on its
// channel, which it reaches only after its deadlock check. A test that
// closes a cycle after WaitParked therefore knows which goroutine does.
func WaitParked(t testing.TB, l sync.Locker, g int64) {
	t.Helper()
	var last string
	deadline := time.Now().Add(testutil.Liveness)
	for {
		blocked := BlockedOn(l)
		state, stack, ok := testutil.GoroutineDump(g)
		if slices.Contains(blocked, g) && ok &&
			(strings.HasPrefix(state, "select") || strings.HasPrefix(state, "chan receive")) &&
			strings.Contains(stack, "locksmith/internal/core.") {
			return
		}
		last = fmt.Sprintf("registered as blocked on it: %v; state %q:\n%s", slices.Contains(blocked, g), state, stack)
		if time.Now().After(deadline) {
			t.Fatalf("goroutine %d parked on %T: not reached after %v; last seen %s", g, l, testutil.Liveness, last)
		}
		runtime.Gosched()
	}
}

// Recorder collects the reports of a test.
type Recorder struct {
	mu      sync.Mutex
	reports []*detect.Report
	poke    chan struct{} // buffered(1): a report arrived
}

// Add records rep; it is the reporter Configure installs.
func (r *Recorder) Add(rep *detect.Report) {
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// Poked delivers a value after a report arrives (at most one pending).
func (r *Recorder) Poked() <-chan struct{} { return r.poke }

// All returns the reports so far, or those of the given kinds.
func (r *Recorder) All(kinds ...detect.Kind) []*detect.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*detect.Report
	for _, rep := range r.reports {
		if len(kinds) == 0 || slices.Contains(kinds, rep.Kind) {
			out = append(out, rep)
		}
	}
	return out
}

// WaitN waits until at least n reports of kind k have arrived and returns
// them.
func (r *Recorder) WaitN(t testing.TB, k detect.Kind, n int) []*detect.Report {
	t.Helper()
	timer := time.NewTimer(testutil.Liveness)
	defer timer.Stop()
	for {
		if got := r.All(k); len(got) >= n {
			return got
		}
		select {
		case <-r.poke:
		case <-timer.C:
			t.Fatalf("%d %v report(s) expected, got %d after %v:\n%s", n, k, len(r.All(k)), testutil.Liveness, r)
		}
	}
}

func (r *Recorder) String() string {
	var b strings.Builder
	for _, rep := range r.All() {
		b.WriteString(rep.String())
		b.WriteString("\n")
	}
	return b.String()
}

// NewRecorder returns an empty Recorder, for a test that installs its
// Add as the reporter itself.
func NewRecorder() *Recorder { return &Recorder{poke: make(chan struct{}, 1)} }

// Configure applies opts plus a reporter that records, and restores the
// previous configuration when the test ends. Wait timeouts are off unless
// opts turn them on.
func Configure(t testing.TB, opts ...detect.Option) *Recorder {
	r := NewRecorder()
	all := append([]detect.Option{detect.WithWaitTimeout(0)}, opts...)
	all = append(all, detect.WithReporter(r.Add))
	t.Cleanup(detect.Configure(all...))
	return r
}

// Hold takes l depth times (re-entering a Monitor) and returns the
// release.
func Hold(l sync.Locker, depth int) (release func()) {
	for range depth {
		l.Lock()
	}
	return func() {
		for range depth {
			l.Unlock()
		}
	}
}

// Named returns a Mutex ("mutex"), Monitor ("monitor"), RWMutex
// ("rwmutex") or RWMonitor ("rwmonitor"), named for reports.
func Named(kind, name string) sync.Locker {
	var l sync.Locker
	switch kind {
	case "mutex":
		l = new(mutex.Mutex)
	case "monitor":
		l = new(monitor.Monitor)
	case "rwmutex":
		l = new(mutex.RWMutex)
	case "rwmonitor":
		l = new(monitor.RWMonitor)
	default:
		panic(kind)
	}
	detect.SetName(l, name)
	return l
}

// DeadlockError requires v to be a *detect.DeadlockError and returns it.
func DeadlockError(t testing.TB, v any) *detect.DeadlockError {
	t.Helper()
	err, ok := v.(error)
	require.Truef(t, ok, "want a *detect.DeadlockError, got %#v", v)
	require.ErrorIs(t, err, detect.ErrDeadlock)
	var de *detect.DeadlockError
	require.True(t, errors.As(err, &de), "%T is not a *detect.DeadlockError", err)
	return de
}

// LockName returns the name in a report's LockInfo, or "".
func LockName(l *detect.LockInfo) string {
	if l == nil {
		return ""
	}
	return l.Name
}

// OwnFrame reports whether a stack shows a frame of a function whose name
// starts with prefix (a test package's, as
// "github.com/locksmith-go/locksmith/detect_test."), and returns the first
// such "file:line".
func OwnFrame(fs []detect.Frame, prefix string) (string, bool) {
	for _, f := range fs {
		if strings.HasPrefix(f.Function, prefix) {
			return f.File + ":" + strconv.Itoa(f.Line), true
		}
	}
	return "", false
}
