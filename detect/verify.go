package detect

import (
	"fmt"
	"os"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// TestingT is the part of *testing.T (and *testing.B and *testing.F) that
// VerifyNone uses. The package does not import testing, so that a program
// that uses the locks does not link the test framework.
type TestingT interface {
	// Helper marks the calling function as a test helper.
	Helper()
	// Name returns the test's name.
	Name() string
	// Errorf fails the test with a formatted message; the test goes on.
	Errorf(string, ...any)
	// Logf records a formatted message in the test's log.
	Logf(string, ...any)
	// Cleanup registers a function to run when the test ends.
	Cleanup(func())
}

// TestingM is what VerifyTestMain and Checked run: *testing.M.
type TestingM interface {
	// Run runs the tests and returns the exit status.
	Run() int
}

// VerifyNone makes the detector's findings fail the test t, and checks at
// its end that it left no goroutine blocked on a locksmith lock. Call it
// first in the test, one line:
//
//	func TestTransfer(t *testing.T) {
//		detect.VerifyNone(t)
//		...
//	}
//
// From then until the test ends, a finding made by the test's goroutine,
// by a goroutine it started (at any depth, while the goroutines between
// are alive) or by one of its subtests that did not call VerifyNone
// itself, is given to t.Errorf with the whole report, as it is made, and
// the test goes on: a lock-order inversion (Order mode), a wait timeout,
// and, when t ends (from t.Cleanup, after the subtests and the cleanups
// registered later), every goroutine of the test still blocked on a lock,
// with the lock, its holder and what the holder is doing, and, while a
// wait timeout is set (as in Cycles and Order modes in a test binary),
// every goroutine of the test still in a condvar.Cond or Monitor wait,
// with the Cond and its lock. The check at the end allows waiters half a
// second to get their locks or be signalled, as goleak allows goroutines
// to exit, for as long as a goroutine of the test is waiting or still
// running: a wait that begins meanwhile (the test returned as a goroutine
// went for a lock) counts, once seen for a tenth of a second, and a wait
// that ends meanwhile does not. A Deadlock is not a failure: the Lock
// that would close the cycle panics (the test fails if nothing recovers
// it) and a LockContext or LockTimeout returns to a caller that backs
// off; it is logged to t (one line for a refusal that backs off).
//
// Only reports that would go to the default reporter are the recorder's:
// a reporter installed with WithReporter gets its reports as before.
// Parallel tests and subtests each get their own findings, whatever
// Configure calls they make.
func VerifyNone(t TestingT) {
	t.Helper()
	s := &scope{t: t, g: gid.Get()}
	register(s)
	t.Cleanup(func() {
		defer unregister(s)
		stuck := stuckWaiters(stuckCheck{
			mine: func(g int64, snap map[int64]gInfo) bool {
				c, _ := claimant(g, snap)
				return c == s
			},
			conds: true, live: true, self: s.g,
		})
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range stuck {
			t.Errorf("%s", r)
		}
		s.done = true
	})
}

// VerifyTestMain runs the tests of m, then reports the findings that no
// test claimed and every goroutine still blocked on a locksmith lock, and
// exits, with a non-zero status if it reported anything or the tests
// failed. It replaces a package's TestMain, one line, as
// goleak.VerifyTestMain does:
//
//	func TestMain(m *testing.M) { detect.VerifyTestMain(m) }
//
// With goleak, use Checked instead:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(detect.Checked(m)) }
//
// While it runs the tests, a finding that no VerifyNone claims (a
// lock-order inversion, a wait timeout) is kept, not given to the default
// reporter (whose panic would end the run), and printed at the end with
// the test whose goroutine made it.
func VerifyTestMain(m TestingM) {
	os.Exit(Checked(m).Run())
}

// Checked returns m with the end-of-run check of VerifyTestMain: its Run
// runs m.Run, then reports to standard error the findings that no test
// claimed and every goroutine still blocked on a locksmith lock, and
// returns a non-zero status if it reported anything or the tests failed.
func Checked(m TestingM) TestingM { return checked{m} }

type checked struct{ m TestingM }

func (c checked) Run() int {
	rec.mu.Lock()
	rec.runs++
	recUpdate()
	rec.mu.Unlock()
	defer func() {
		rec.mu.Lock()
		rec.runs--
		recUpdate()
		rec.mu.Unlock()
	}()
	code := c.m.Run()
	stuck := stuckWaiters(stuckCheck{
		mine: func(int64, map[int64]gInfo) bool { return true },
		skip: reportedStuck,
	})
	found := append(takeUnclaimed(), stuck...)
	if len(found) == 0 {
		return code
	}
	w := stderr()
	fmt.Fprintf(w, "locksmith: %d finding(s) that no test claimed (detect.VerifyNone(t) in a test fails that test instead):\n\n", len(found))
	for _, r := range found {
		fmt.Fprintf(w, "%s\n%s\n", madeIn(r), r)
	}
	if code == 0 {
		code = 1
	}
	return code
}
