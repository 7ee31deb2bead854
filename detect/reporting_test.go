package detect_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// account is a bank account for the inversion tests: transfer locks the
// two accounts in argument order.
type account struct {
	mu      mutex.Mutex
	balance int
}

// transfer's two Lock lines are found by lineOf in tests.
func transfer(from, to *account, n int) {
	from.mu.Lock() // transfer: from
	defer from.mu.Unlock()
	to.mu.Lock() // transfer: to
	defer to.mu.Unlock()
	from.balance -= n
	to.balance += n
}

// sourceLine returns the line of this file holding marker.
func sourceLine(t *testing.T, marker string) int {
	t.Helper()
	b, err := os.ReadFile("reporting_test.go")
	require.NoError(t, err)
	return lineOf(t, string(b), marker)
}

// releaseIfHeld unlocks l if the calling goroutine holds it: whether a
// Lock that panics with a report leaves its lock held is not what these
// tests are about.
func releaseIfHeld(l *mutex.Mutex) {
	if detect.OwnerOf(l) == testutil.GoroutineID() {
		l.Unlock()
	}
}

// lockOrderError requires v to be a *detect.LockOrderError and returns it.
func lockOrderError(t *testing.T, v any) *detect.LockOrderError {
	t.Helper()
	err, ok := v.(error)
	require.Truef(t, ok, "want a *detect.LockOrderError, got %#v", v)
	require.ErrorIs(t, err, detect.ErrLockOrder)
	var le *detect.LockOrderError
	require.True(t, errors.As(err, &le), "%T is not a *detect.LockOrderError", err)
	return le
}

// TestPanicReporter: with PanicReporter, the acquisition that closes an
// inversion panics, in the goroutine that makes it, with a
// *LockOrderError whose message carries the whole report; wait timeouts
// and deadlocks are only printed by the reporter.
func TestPanicReporter(t *testing.T) {
	t.Cleanup(detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0), detect.WithReporter(detect.PanicReporter)))
	a, b := &account{}, &account{}
	transfer(a, b, 1)
	var v any
	var ownerA, ownerB int64
	closer := testutil.OnOtherOK(t, func() {
		v = testutil.Catch(func() { transfer(b, a, 1) })
		ownerA, ownerB = detect.OwnerOf(&a.mu), detect.OwnerOf(&b.mu)
		releaseIfHeld(&a.mu)
		releaseIfHeld(&b.mu)
	})
	// The acquisition that panicked was undone, and transfer's deferred
	// Unlock released the account it held.
	assert.Zero(t, ownerA, "the Lock that panicked left its lock held")
	assert.Zero(t, ownerB, "the deferred Unlock ran")
	le := lockOrderError(t, v)
	r := le.Report
	require.Equal(t, detect.LockOrder, r.Kind)
	require.Len(t, r.Steps, 2)
	assert.Equal(t, closer, r.Steps[1].Goroutine, "the panic is the closing goroutine's")
	msg := le.Error()
	assert.True(t, strings.HasPrefix(msg, fmt.Sprintf("detect: lock order inversion: goroutine %d locked *mutex.Mutex %#x (first locked at reporting_test.go:%d) while holding *mutex.Mutex %#x (first locked at reporting_test.go:%d)",
		closer, r.Steps[1].WaitsFor.Addr, sourceLine(t, "// transfer: from"), r.Steps[1].Holds.Addr, sourceLine(t, "// transfer: to"))), msg)
	assert.Contains(t, msg, r.String(), "the panic prints the report")
	assert.Equal(t, detect.Seen{Times: 1, Locks: 2, Goroutines: 2}, r.Seen())

	// A deadlock is printed, not panicked (the Lock that would close it
	// panics anyway); in a test binary a wait timeout is printed, then
	// panics (see TestDefaultReporter for the run it ends).
	stderr := captureStderr(t, func() {
		assert.NotPanics(t, func() {
			detect.PanicReporter(&detect.Report{Kind: detect.Deadlock, Steps: []detect.Step{{Goroutine: 1, WaitsFor: &detect.LockInfo{Type: "*mutex.Mutex"}}}})
		})
		v := testutil.Catch(func() {
			detect.PanicReporter(&detect.Report{Kind: detect.WaitTimeout, Steps: []detect.Step{{Goroutine: 1, WaitsFor: &detect.LockInfo{Type: "*mutex.Mutex"}}}})
		})
		msg := fmt.Sprint(v)
		assert.Contains(t, msg, "goroutine blocked on a lock", "the panic names the report")
		assert.Contains(t, msg, "the test binary stops here")
	})
	assert.Contains(t, stderr, "goroutine blocked on a lock", "printed before the panic")
	assert.Contains(t, stderr, "Found one locksmith deadlock")
}

// TestPrintReporter: PrintReporter writes the report to stderr and
// returns, whatever the kind.
func TestPrintReporter(t *testing.T) {
	r := &detect.Report{Kind: detect.LockOrder, Mode: detect.Order, Steps: []detect.Step{
		{Goroutine: 1, Holds: &detect.LockInfo{Name: "a", Type: "*mutex.Mutex"}, WaitsFor: &detect.LockInfo{Name: "b", Type: "*mutex.Mutex"}},
		{Goroutine: 2, Holds: &detect.LockInfo{Name: "b", Type: "*mutex.Mutex"}, WaitsFor: &detect.LockInfo{Name: "a", Type: "*mutex.Mutex"}},
	}}
	stderr := captureStderr(t, func() { detect.PrintReporter(r) })
	assert.Equal(t, r.String(), stderr)
}

// captureStderr runs f with os.Stderr sent to a pipe and returns what was
// written.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	rd, wr, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stderr
	os.Stderr = wr
	got := make(chan string)
	go func() {
		b, _ := io.ReadAll(rd)
		got <- string(b)
	}()
	func() {
		defer func() { os.Stderr = saved }()
		f()
	}()
	require.NoError(t, wr.Close())
	s := <-got
	require.NoError(t, rd.Close())
	return s
}

// TestDefaultReporter: in a test binary, with no reporter configured, an
// inversion panics (so go test fails) unless LOCKSMITH_DETECT_REPORT=print
// asks for the print; a reporter set with WithReporter wins over the
// variable.
func TestDefaultReporter(t *testing.T) {
	for _, tc := range []struct {
		report, role, want string
	}{
		{"<unset>", "inversion", "panic=lock order inversion\n"},
		{"panic", "inversion", "panic=lock order inversion\n"},
		{"print", "inversion", "panic=none\n"},
		{"print", "inversion-configured-panic", "panic=lock order inversion\n"},
	} {
		t.Run(tc.report+"/"+tc.role, func(t *testing.T) {
			stdout, stderr := runHelper(t, tc.role, detect.EnvVar+"=order", detect.ReportEnvVar+"="+tc.report)
			assert.Contains(t, stdout, tc.want, "stderr:\n%s", stderr)
			if tc.want == "panic=none\n" {
				assert.Contains(t, stderr, "WARNING: possible circular locking dependency detected", "printed instead")
			}
		})
	}
}

// inversionChild is the child of TestDefaultReporter: it makes an
// inversion with the reporter the environment chose (or PanicReporter
// set explicitly) and prints what the closing acquisition panicked with.
func inversionChild(t *testing.T, configure bool) {
	if configure {
		defer detect.Configure(detect.WithReporter(detect.PanicReporter))()
	}
	a, b := &account{}, &account{}
	transfer(a, b, 1)
	v := testutil.Catch(func() { transfer(b, a, 1) })
	releaseIfHeld(&a.mu)
	releaseIfHeld(&b.mu)
	switch err, _ := v.(error); {
	case v == nil:
		os.Stdout.WriteString("panic=none\n")
	case errors.Is(err, detect.ErrLockOrder):
		os.Stdout.WriteString("panic=" + detect.ErrLockOrder.Error() + "\n")
	default:
		t.Fatalf("unexpected panic %v", v)
	}
}

// TestOneReportPerProblem: one inversion made over a hundred pairs of
// accounts is one report, which goes on counting the occurrences, the
// lock instances and the goroutines; String says so.
func TestOneReportPerProblem(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	accounts := make([]*account, 200)
	for i := range accounts {
		accounts[i] = &account{balance: 100}
	}
	var wg sync.WaitGroup
	for i := 0; i < 200; i += 2 {
		a, b := accounts[i], accounts[i+1]
		transfer(a, b, 10)
		if i < 100 {
			transfer(b, a, 10)
		} else {
			wg.Add(1)
			go func() { // other goroutines: the same problem
				defer wg.Done()
				transfer(b, a, 10)
			}()
		}
	}
	wg.Wait()
	reps := rec.All()
	require.Len(t, reps, 1, "%s", rec)
	r := reps[0]
	assert.Equal(t, detect.LockOrder, r.Kind)
	assert.Equal(t, detect.Seen{Times: 100, Locks: 200, Goroutines: 51}, r.Seen())
	assert.Contains(t, r.String(), "(seen 100 times over 200 lock instances in 51 goroutines; reported once)")
	var dump strings.Builder
	detect.Dump(&dump)
	file := mustAbs(t, "reporting_test.go")
	toLine := sourceLine(t, "// transfer: to")
	assert.Contains(t, dump.String(), fmt.Sprintf("\nreported problems: 1\n  lock order at %s:%d, %s:%d: seen 100 times over 200 lock instances in 51 goroutines\n",
		file, toLine, file, toLine), dump.String())
	for _, a := range accounts {
		assert.Equal(t, 100, a.balance)
	}
}

// TestOneDeadlockReportPerProblem: a deadlock that recurs on the same code
// path (here, three times over three pairs of locks) is delivered once;
// every goroutine refused still gets its error, whose report shares the
// tally.
func TestOneDeadlockReportPerProblem(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	var errs []*detect.DeadlockError
	for range 3 {
		errs = append(errs, deadlockBothWays(t))
	}
	require.Len(t, rec.All(detect.Deadlock), 1, "%s", rec)
	for _, de := range errs {
		assert.Equal(t, 3, de.Report.Seen().Times)
		assert.Equal(t, 6, de.Report.Seen().Locks)
	}
}

// deadlockBothWays makes a real two-goroutine deadlock on two new locks:
// another goroutine holds x and waits for y, and the caller, holding y,
// tries x; it returns the caller's error. It does not use halfCycle: the
// report's lock sites must be lines of this file, which the tests check.
func deadlockBothWays(t *testing.T) *detect.DeadlockError {
	t.Helper()
	var x, y mutex.Mutex
	xHeld := make(chan struct{})
	y.Lock()
	other := testutil.Spawn(func() {
		x.Lock()
		defer x.Unlock()
		close(xHeld)
		y.Lock()
		y.Unlock()
	})
	<-xHeld
	detecttest.WaitParked(t, &y, other.ID(t))
	err := x.LockContext(context.Background())
	y.Unlock()
	require.Nil(t, other.Wait(t))
	var de *detect.DeadlockError
	require.ErrorAs(t, err, &de)
	return de
}

// TestOneWaitTimeoutReportPerProblem: goroutines that time out waiting at
// the same call site, for the same holder's call site, are one report.
func TestOneWaitTimeoutReportPerProblem(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(5*time.Millisecond))
	var mu mutex.Mutex
	held, release := make(chan struct{}), make(chan struct{})
	holder := testutil.Spawn(func() {
		mu.Lock()
		defer mu.Unlock()
		close(held)
		<-release // where the holder is stuck: the same for both reports
	})
	<-held
	testutil.WaitState(t, holder.ID(t), "detect_test.TestOneWaitTimeoutReportPerProblem")
	waiter := func() { mu.Lock(); mu.Unlock() }
	w1 := testutil.Spawn(waiter)
	reps := rec.WaitN(t, detect.WaitTimeout, 1)
	w2 := testutil.Spawn(waiter)
	testutil.WaitFor(t, "the second wait counted", func() bool { return reps[0].Seen().Times == 2 || len(rec.All()) > 1 })
	close(release)
	require.Nil(t, holder.Wait(t))
	require.Nil(t, w1.Wait(t))
	require.Nil(t, w2.Wait(t))
	assert.Len(t, rec.All(), 1, "%s", rec)
	assert.Equal(t, detect.Seen{Times: 2, Locks: 1, Goroutines: 3}, reps[0].Seen(), "two waiters and the holder")
}

// TestOrderReportSaysWhere: a LockOrder report names, for each step,
// where the goroutine took the lock it holds, as well as where it took
// the next one.
func TestOrderReportSaysWhere(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	fromLine, toLine := sourceLine(t, "// transfer: from"), sourceLine(t, "// transfer: to")
	a, b := &account{}, &account{}
	transfer(a, b, 1)
	transfer(b, a, 1)
	require.Len(t, rec.All(), 1, "%s", rec)
	r := rec.All()[0]
	s := r.String()
	t.Logf("report:\n%s", s)
	for i, st := range r.Steps {
		require.NotEmpty(t, st.HoldsAt, "step %d", i)
		assert.Equal(t, fromLine, st.HoldsAt[0].Line, "step %d: the lock held was taken on transfer's first Lock line", i)
		assert.True(t, strings.HasSuffix(st.HoldsAt[0].Function, "detect_test.transfer"), st.HoldsAt[0].Function)
		assert.Equal(t, toLine, st.Stack[0].Line, "step %d: the next lock on the second", i)
	}
	assert.Contains(t, s, fmt.Sprintf("   locked at github.com/locksmith-go/locksmith/detect_test.transfer\n   \t%s:%d\n",
		mustAbs(t, "reporting_test.go"), fromLine))
	assert.NotContains(t, s, "not recorded")
}

// TestDeadlockReportSaysWhere: in Order mode a Deadlock report names
// where each goroutine took the lock it holds; in Cycles mode, which does
// not record it, the report says so in one line and what to do instead,
// and an unnamed lock is named by where it was first waited for, not as
// "first locked".
func TestDeadlockReportSaysWhere(t *testing.T) {
	t.Run("order", func(t *testing.T) {
		rec := detecttest.Configure(t, detect.WithMode(detect.Order))
		de := deadlockBothWays(t)
		r := de.Report
		s := r.String()
		t.Logf("report:\n%s", s)
		require.Len(t, rec.All(), 1)
		assert.Equal(t, detect.Order, r.Mode)
		for i, st := range r.Steps {
			require.NotEmpty(t, st.HoldsAt, "step %d", i)
			assert.Contains(t, st.HoldsAt[0].File, "reporting_test.go")
		}
		assert.Equal(t, 2, strings.Count(s, "    locked at github.com/locksmith-go/locksmith/detect_test.deadlockBothWays"), s)
		assert.NotContains(t, s, "not recorded")
	})
	t.Run("cycles", func(t *testing.T) {
		rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
		de := deadlockBothWays(t)
		r := de.Report
		s := r.String()
		t.Logf("report:\n%s", s)
		require.Len(t, rec.All(), 1)
		assert.Equal(t, detect.Cycles, r.Mode)
		// Each holder's site is its Lock's line (the lock's PC), not one
		// where another goroutine waited.
		if !fastSites {
			assert.Contains(t, s, "(where a goroutine took a lock through an interface, or by a path that records no site, "+
				"is not recorded in cycles mode: run with LOCKSMITH_DETECT=order to record it, or name the locks with detect.SetName)\n")
			return
		}
		for i, st := range r.Steps {
			require.NotEmpty(t, st.HoldsAt, "step %d", i)
			assert.Contains(t, st.HoldsAt[0].File, "reporting_test.go")
		}
		assert.Equal(t, 2, strings.Count(s, "    locked at github.com/locksmith-go/locksmith/detect_test.deadlockBothWays"), s)
		assert.NotContains(t, s, "not recorded")
		assert.NotContains(t, s, "first locked at")
		// y was waited for by the other goroutine, x by this one.
		assert.Contains(t, s, " first waited for at "+mustAbs(t, "reporting_test.go"))
	})
}

func mustAbs(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(name)
	require.NoError(t, err)
	return p
}

// TestEnvReadOnceTestsStart: go test keys its result cache on the
// environment variables that the test binary reads once its test log has
// started (-test.testlogfile); the detector's variables, read at start-up
// before the log exists, are read again by the first lock operation of a
// test. The child here only takes one uncontended lock in Cycles mode.
func TestEnvReadOnceTestsStart(t *testing.T) {
	for _, tc := range []struct {
		role string
		want bool
	}{
		{"lock-once", true},
		{"no-lock", false}, // nothing locked: the result cannot depend on the detector
	} {
		t.Run(tc.role, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "testlog.txt")
			_, stderr := runHelper(t, tc.role, "-test.testlogfile="+log, detect.EnvVar+"=cycles")
			b, err := os.ReadFile(log)
			require.NoError(t, err, "stderr:\n%s", stderr)
			got := string(b)
			t.Logf("test log:\n%s", got)
			require.True(t, strings.HasPrefix(got, "# test log\n"), got)
			for _, v := range []string{detect.EnvVar, detect.ReportEnvVar} {
				if tc.want {
					assert.Contains(t, got, "\ngetenv "+v+"\n")
				} else {
					assert.NotContains(t, got, "\ngetenv "+v+"\n")
				}
			}
			assert.NotContains(t, got, "stat "+log, "the check for the log must not be logged as an input")
		})
	}
}

// wrapped is a type whose methods lock and unlock its mutex: every
// acquisition through it has the same innermost frame.
type wrapped struct{ mu mutex.Mutex }

func (w *wrapped) lock()   { w.mu.Lock() }
func (w *wrapped) unlock() { w.mu.Unlock() }

func pairAB(a, b *wrapped) { a.lock(); b.lock(); b.unlock(); a.unlock() }
func pairCD(c, d *wrapped) { c.lock(); d.lock(); d.unlock(); c.unlock() }

// Two unrelated inversions whose locks are all taken through one wrapper
// method are two problems, not one: a site names the wrapper's caller too.
func TestOneReportPerProblemThroughWrapper(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a, b, c, d := &wrapped{}, &wrapped{}, &wrapped{}, &wrapped{}
	pairAB(a, b)
	pairAB(b, a) // inversion 1
	pairCD(c, d)
	pairCD(d, c) // inversion 2: other code, other locks
	pairAB(b, a) // inversion 1 again: no new report
	reps := rec.All()
	require.Len(t, reps, 2, "%s", rec)
	for _, r := range reps {
		assert.Equal(t, detect.LockOrder, r.Kind)
	}
}
