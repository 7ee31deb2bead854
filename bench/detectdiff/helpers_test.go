// The helpers of package detect's tests that the differential test
// uses, with blockedOn read from internal/core: this package lives in the
// bench module, which go-deadlock's import keeps out of the library's
// module, so it cannot see detect's export_test.go.

package detectdiff_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveness is the one generous deadline (see testutil).
const liveness = testutil.Liveness

func goroutineID() int64 { return testutil.GoroutineID() }

func catch(f func()) any { return testutil.Catch(f) }

func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return testutil.Await(t, ch, what)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, what, cond)
}

// proc is a goroutine started by a test, with its ID and its panic value.
type proc struct {
	id    int64
	ready chan struct{} // closed once id is set
	done  chan struct{} // closed when f has returned or panicked
	v     any           // f's panic value; read after done
}

// spawn runs f on a new goroutine, recovering any panic into p.v.
func spawn(f func()) *proc {
	p := &proc{ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.id = goroutineID()
		close(p.ready)
		p.v = catch(f)
	}()
	return p
}

// ID waits for p to start and returns its goroutine ID.
func (p *proc) ID(t testing.TB) int64 {
	t.Helper()
	await(t, p.ready, "goroutine start")
	return p.id
}

// wait waits for p to finish and returns its panic value.
func (p *proc) wait(t testing.TB) any {
	t.Helper()
	await(t, p.done, "goroutine end")
	return p.v
}

// goroutineDump returns the state (as in "goroutine 7 [select]:") and the
// stack of goroutine g, from one runtime.Stack(all) snapshot.
func goroutineDump(g int64) (state, stack string, ok bool) {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	head := "goroutine " + strconv.FormatInt(g, 10) + " ["
	for _, block := range strings.Split(string(buf), "\n\n") {
		if !strings.HasPrefix(block, head) {
			continue
		}
		rest := block[len(head):]
		end := strings.Index(rest, "]")
		if end < 0 {
			return "", block, true
		}
		return rest[:end], block, true
	}
	return "", "", false
}

// waitParked waits until goroutine g is parked in a locksmith lock's slow
// path waiting for l: registered as blocked on l and asleep on its
// channel, which it reaches only after its deadlock check. A test that
// closes a cycle after waitParked therefore knows which goroutine does.
func waitParked(t testing.TB, l sync.Locker, g int64) {
	t.Helper()
	var last string
	deadline := time.Now().Add(liveness)
	for {
		blocked := blockedOn(l)
		state, stack, ok := goroutineDump(g)
		if slices.Contains(blocked, g) && ok &&
			(strings.HasPrefix(state, "select") || strings.HasPrefix(state, "chan receive")) &&
			strings.Contains(stack, "locksmith/internal/core.") {
			return
		}
		last = fmt.Sprintf("registered as blocked on it: %v; state %q:\n%s", slices.Contains(blocked, g), state, stack)
		if time.Now().After(deadline) {
			t.Fatalf("goroutine %d parked on %T: not reached after %v; last seen %s", g, l, liveness, last)
		}
		runtime.Gosched()
	}
}

// waitState waits until goroutine g is in a state whose stack contains
// frame, for goroutines blocked in other primitives (go-deadlock's).
func waitState(t testing.TB, g int64, frame string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("goroutine %d blocked in %s", g, frame), func() bool {
		state, stack, ok := goroutineDump(g)
		return ok && state != "running" && state != "runnable" && strings.Contains(stack, frame)
	})
}

// recorder collects the reports of a test.
type recorder struct {
	mu      sync.Mutex
	reports []*detect.Report
	poke    chan struct{} // buffered(1): a report arrived
}

func (r *recorder) add(rep *detect.Report) {
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	r.mu.Unlock()
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// all returns the reports so far, or those of the given kinds.
func (r *recorder) all(kinds ...detect.Kind) []*detect.Report {
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

// waitN waits until at least n reports of kind k have arrived and returns
// them.
func (r *recorder) waitN(t testing.TB, k detect.Kind, n int) []*detect.Report {
	t.Helper()
	timer := time.NewTimer(liveness)
	defer timer.Stop()
	for {
		if got := r.all(k); len(got) >= n {
			return got
		}
		select {
		case <-r.poke:
		case <-timer.C:
			t.Fatalf("%d %v report(s) expected, got %d after %v:\n%s", n, k, len(r.all(k)), liveness, r)
		}
	}
}

func (r *recorder) String() string {
	var b strings.Builder
	for _, rep := range r.all() {
		b.WriteString(rep.String())
		b.WriteString("\n")
	}
	return b.String()
}

// configure applies opts plus a reporter that records, and restores the
// previous configuration when the test ends. Wait timeouts are off unless
// opts turn them on.
func configure(t testing.TB, opts ...detect.Option) *recorder {
	r := &recorder{poke: make(chan struct{}, 1)}
	all := append([]detect.Option{detect.WithWaitTimeout(0)}, opts...)
	all = append(all, detect.WithReporter(r.add))
	t.Cleanup(detect.Configure(all...))
	return r
}

// hold takes l depth times (re-entering a Monitor) and returns the
// release.
func hold(l sync.Locker, depth int) (release func()) {
	for range depth {
		l.Lock()
	}
	return func() {
		for range depth {
			l.Unlock()
		}
	}
}

// named returns a Mutex or a Monitor, named for reports.
func named(kind, name string) sync.Locker {
	var l sync.Locker
	switch kind {
	case "mutex":
		l = new(mutex.Mutex)
	case "monitor":
		l = new(monitor.Monitor)
	default:
		panic(kind)
	}
	detect.SetName(l, name)
	return l
}

// deadlockError requires v to be a *detect.DeadlockError and returns it.
func deadlockError(t testing.TB, v any) *detect.DeadlockError {
	t.Helper()
	err, ok := v.(error)
	require.Truef(t, ok, "want a *detect.DeadlockError, got %#v", v)
	require.ErrorIs(t, err, detect.ErrDeadlock)
	var de *detect.DeadlockError
	require.True(t, errors.As(err, &de), "%T is not a *detect.DeadlockError", err)
	return de
}

// lockName returns the name in a report's LockInfo, or "".
func lockName(l *detect.LockInfo) string {
	if l == nil {
		return ""
	}
	return l.Name
}

// ownFrames reports whether a stack shows a frame of this test file set
// (package detectdiff_test), and returns the first such "file:line".
func ownFrame(fs []detect.Frame) (string, bool) {
	for _, f := range fs {
		if strings.HasPrefix(f.Function, "github.com/locksmith-go/locksmith/bench/detectdiff_test.") {
			return f.File + ":" + strconv.Itoa(f.Line), true
		}
	}
	return "", false
}

// callerLine returns the file and line of its caller.
func callerLine() (pc uintptr, file string, line int) {
	pc, file, line, _ = runtime.Caller(1)
	return pc, file, line
}

// blockedOn returns the IDs of the goroutines registered as blocked on l.
func blockedOn(l sync.Locker) []int64 {
	a, ok := core.Adapt(l)
	if !ok {
		panic("detectdiff test: not a locksmith lock")
	}
	var gs []int64
	core.Waiting(func(wi core.WaitInfo) {
		if wi.Lock == a.Lock {
			gs = append(gs, wi.G)
		}
	})
	return gs
}

// lockPair takes a then b on the calling goroutine and releases both.
func lockPair(a, b sync.Locker) {
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
}

// onGoroutine runs f on a new goroutine and waits for it.
func onGoroutine(t testing.TB, f func()) int64 {
	t.Helper()
	p := spawn(f)
	require.Nil(t, p.wait(t))
	return p.id
}

// helperEnv, when set, makes TestHelperProcess act as a child process for
// the role named in it instead of skipping.
const helperEnv = "LOCKSMITH_DETECTDIFF_TEST_HELPER"

// runHelper runs this test binary again, running only TestHelperProcess
// with helperEnv=role, and returns its stdout and stderr.
func runHelper(t *testing.T, role string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	// The race detector's runtime sleeps a second at exit by default.
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	require.NoError(t, err, "child %s:\nstdout:\n%s\nstderr:\n%s", role, out.String(), errb.String())
	return out.String(), errb.String()
}

// TestHelperProcess is not a test: it is the child of runHelper.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("child process helper")
	}
	switch role {
	case "godeadlock-hidden-holder":
		goDeadlockHiddenHolderChild(t)
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// retainedMiB returns how much more heap is in use, after collection, than
// before.
func retainedMiB(before runtime.MemStats) float64 {
	runtime.GC()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return (float64(after.HeapInuse) - float64(before.HeapInuse)) / (1 << 20)
}

func baseline() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}
