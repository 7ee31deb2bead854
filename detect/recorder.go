package detect

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// The recorder: what VerifyNone and VerifyTestMain (testing.go) install,
// so that a finding fails the test that made it and the run goes on.
//
// The testing package gives a library no way to fail the running test:
// only a test's own T can, and a lock knows no T. So a test hands its T
// over (VerifyNone), which registers the test's goroutine as a scope; a
// finding is claimed by the scope of the nearest registered goroutine
// among the ancestors of the goroutine that made it (the goroutine
// itself, the one whose go statement started it, and so on: runtime.Stack
// prints "created by ... in goroutine N"), and is given to that test's
// Errorf at once. A goroutine a test started, or a subtest's goroutine,
// is so the test's, however deep. A finding that no scope claims is kept
// for the end of the run, if VerifyTestMain runs the tests, and printed
// there with the test whose goroutine made it; without either helper the
// default reporter has it, as outside tests.
//
// A chain of ancestors ends at the first goroutine that has exited: a
// goroutine whose creator exited before the finding is claimed by no
// test. (Go keeps no record of an exited goroutine's creator unless
// GODEBUG=tracebackancestors asks for it.)
//
// Rejected alternatives: the reporter of the configuration in force,
// which parallel tests share (Configure layers their calls, and the last
// one's reporter would hear of every test's finding); matching findings
// to tests by time, which parallel tests defeat; reaching the running
// test's T through the runtime's or the testing package's internals,
// which no API offers and which would break with any release.
var rec struct {
	mu     sync.Mutex
	scopes map[int64]*scope // guarded by mu: by test goroutine
	runs   int              // guarded by mu: VerifyTestMain runs in progress
	// unclaimed are the findings no scope claimed while a run was in
	// progress, for its end.
	unclaimed []*Report // guarded by mu
}

// recOn says that the recorder has a scope or a run: deliver asks it.
var recOn atomic.Bool

// scope is one test that called VerifyNone.
type scope struct {
	t  TestingT
	g  int64
	mu sync.Mutex // serialises the test's Errorf calls with its end
	// done is set once the test's check has run: the test is about to
	// complete, and its T must not be used again.
	done bool // guarded by mu
	// keys are the problems given to the test (engine.go's problemKey):
	// a problem reported to one test is new to another.
	keys map[string]bool // guarded by mu
}

// fresh reports whether the problem key has not been given to s's test
// yet, and counts it as given.
func (s *scope) fresh(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.keys[key] {
		return false
	}
	if s.keys == nil {
		s.keys = map[string]bool{}
	}
	s.keys[key] = true
	return true
}

// claimTest finds the test that made r, records it in r, and returns its
// scope, or nil if no test that called VerifyNone claims it.
func claimTest(r *Report) *scope {
	s, test := claimant(subject(r), allGoroutines())
	r.claimed, r.test, r.claimDone = s, test, true
	return s
}

// recUpdate sets recOn; rec.mu is held.
func recUpdate() { recOn.Store(len(rec.scopes) > 0 || rec.runs > 0) }

// register makes g's test s; it panics if g already has one.
func register(s *scope) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.scopes == nil {
		rec.scopes = map[int64]*scope{}
	}
	if o := rec.scopes[s.g]; o != nil {
		panic(fmt.Sprintf("detect: VerifyNone(%s) called twice in goroutine %d (first by %s)", s.t.Name(), s.g, o.t.Name()))
	}
	rec.scopes[s.g] = s
	recUpdate()
}

func unregister(s *scope) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.scopes[s.g] == s {
		delete(rec.scopes, s.g)
	}
	recUpdate()
}

// claimant returns the scope of the nearest registered ancestor of g in
// snap, and the test function that the nearest test goroutine among them
// runs ("" if none is seen).
func claimant(g int64, snap map[int64]gInfo) (s *scope, test string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i := 0; g != 0 && i < 10000; i++ {
		gi, alive := snap[g]
		if test == "" {
			test = gi.test
		}
		if s = rec.scopes[g]; s != nil {
			return s, test
		}
		if !alive {
			break
		}
		g = gi.createdBy
	}
	return nil, test
}

// subject is the goroutine whose test made r: the one that found it (a
// deadlock's refused goroutine, the acquirer that closed an inversion),
// or, for a wait timeout or a Cond wait, which the watchdog finds, the
// waiter.
func subject(r *Report) int64 {
	if (r.Kind == WaitTimeout || r.Kind == CondWait) && len(r.Steps) > 0 {
		return r.Steps[0].Goroutine
	}
	return gid.Get()
}

// recorded hands r, which goes to the default reporter, to the recorder,
// and reports whether the recorder took it. A Deadlock is logged to the
// test that made it, and not a failure: the Lock that would close the
// cycle panics, and a LockContext or LockTimeout returns to a caller that
// backs off. Any other report fails the test that made it, or, claimed by
// none while VerifyTestMain runs the tests, is kept for the end of the run.
func recorded(r *Report) bool {
	if !recOn.Load() {
		return false
	}
	if !r.claimDone {
		claimTest(r)
	}
	if s := r.claimed; s != nil && s.report(r) {
		return true
	}
	if r.Kind == Deadlock {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.runs == 0 {
		return false
	}
	rec.unclaimed = append(rec.unclaimed, r)
	return true
}

// report gives r to s's test, unless the test has ended; it reports
// whether it did.
func (s *scope) report(r *Report) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return false
	}
	if s.keys == nil {
		s.keys = map[string]bool{}
	}
	s.keys[problemKey(r)] = true
	switch {
	case r.Kind == Deadlock && r.BackedOff:
		s.t.Logf("%s", r.Line())
	case r.Kind == Deadlock:
		s.t.Logf("%s", r)
	default:
		s.t.Errorf("%s", r)
	}
	return true
}

// takeUnclaimed returns the findings kept for the end of the run.
func takeUnclaimed() []*Report {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.unclaimed
	rec.unclaimed = nil
	return out
}

// madeIn says which test made r, for a report printed at the end of a run.
func madeIn(r *Report) string {
	if r.test == "" {
		return "from no test found (the goroutine's creator has exited, or it runs outside the tests):"
	}
	return "from " + testName(r.test) + ":"
}

// testName shortens a test function's name to its package's last element
// and the function: "bank.TestTransfer", "bank.TestTransfer.func1".
func testName(fn string) string {
	if i := strings.LastIndex(fn, "/"); i >= 0 {
		fn = fn[i+1:]
	}
	return fn
}
