package detect_test

import (
	"fmt"
	"os"
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

// fakeT is a detect.TestingT that records what VerifyNone does with it,
// so that a test can play several tests at once.
type fakeT struct {
	name     string
	mu       sync.Mutex
	errors   []string
	logs     []string
	cleanups []func()
	errored  chan struct{} // if not nil, receives after each Errorf
}

func (f *fakeT) Helper()      {}
func (f *fakeT) Name() string { return f.name }
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
	if f.errored != nil {
		select {
		case f.errored <- struct{}{}:
		default:
		}
	}
}

func (f *fakeT) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Cleanup(c func()) { f.cleanups = append(f.cleanups, c) }

// end runs f's cleanups, as the testing package does when a test ends.
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func (f *fakeT) Errors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.errors...)
}

// play runs body as the test named name would: in a goroutine of its own
// that called VerifyNone first, ending it afterwards.
func play(t *testing.T, name string, body func()) *fakeT {
	ft := &fakeT{name: name}
	p := testutil.Spawn(func() {
		detect.VerifyNone(ft)
		body()
		ft.end()
	})
	require.Nil(t, p.Wait(t))
	return ft
}

// inversion takes a then b, then b then a, in the calling goroutine.
func inversion(a, b *mutex.Mutex) {
	a.Lock()
	b.Lock() // INVERSION FIRST
	b.Unlock()
	a.Unlock()
	b.Lock()
	a.Lock() // INVERSION CLOSES
	a.Unlock()
	b.Unlock()
}

// orderMode turns Order mode on with the default reporter and a problem
// table of the test's own.
func orderMode(t *testing.T) {
	t.Cleanup(detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0), detect.WithReporter(nil)))
}

// TestVerifyNoneFailsTheTestThatMadeIt: an inversion made by a test that
// called VerifyNone, in its own goroutine or in one it started (two
// levels down), fails that test with the report, and the run goes on: no
// panic. Two tests running at once each get their own finding; a test
// without findings gets nothing.
func TestVerifyNoneFailsTheTestThatMadeIt(t *testing.T) {
	orderMode(t)
	var wg sync.WaitGroup
	var own, nested, clean *fakeT
	a1, b1 := &mutex.Mutex{}, &mutex.Mutex{}
	a2, b2 := &mutex.Mutex{}, &mutex.Mutex{}
	start := make(chan struct{})
	wg.Add(3)
	go func() {
		defer wg.Done()
		own = play(t, "TestOwn", func() {
			<-start
			inversion(a1, b1)
		})
	}()
	go func() {
		defer wg.Done()
		nested = play(t, "TestNested", func() {
			<-start
			done := make(chan struct{})
			go func() {
				defer close(done)
				inner := make(chan struct{})
				go func() {
					defer close(inner)
					inversion(a2, b2)
				}()
				<-inner
			}()
			<-done
		})
	}()
	go func() {
		defer wg.Done()
		clean = play(t, "TestClean", func() {
			<-start
			a, b := &mutex.Mutex{}, &mutex.Mutex{}
			a.Lock()
			b.Lock()
			b.Unlock()
			a.Unlock()
		})
	}()
	close(start)
	wg.Wait()
	for _, ft := range []*fakeT{own, nested} {
		errs := ft.Errors()
		require.Len(t, errs, 1, "%s: one finding", ft.name)
		assert.Contains(t, errs[0], "WARNING: possible circular locking dependency detected", ft.name)
	}
	// Each report is its own test's: the locks it names are that test's.
	assert.Contains(t, own.Errors()[0], addr(a1))
	assert.Contains(t, nested.Errors()[0], addr(a2))
	assert.NotContains(t, own.Errors()[0], addr(a2))
	assert.Empty(t, clean.Errors())
}

// TestVerifyNoneReportsStuckWaiters: a test that returns while one of its
// goroutines holds a lock and blocks in a channel send, and another waits
// for that lock, fails with the waiter, the lock, the holder and what the
// holder is doing.
func TestVerifyNoneReportsStuckWaiters(t *testing.T) {
	t.Cleanup(detect.Configure(detect.WithWaitTimeout(0)))
	var mu mutex.Mutex
	detect.SetName(&mu, "stuck")
	send := make(chan int)
	held := make(chan struct{})
	var holder, waiter *testutil.Proc
	ft := play(t, "TestLeaves", func() {
		holder = testutil.Spawn(func() {
			mu.Lock()
			defer mu.Unlock()
			close(held)
			send <- 1 // HOLDER BLOCKS
		})
		<-held
		waiter = testutil.Spawn(func() {
			mu.Lock() // WAITER WAITS
			mu.Unlock()
		})
		detecttest.WaitParked(t, &mu, waiter.ID(t))
	})
	errs := ft.Errors()
	<-send
	require.Nil(t, holder.Wait(t))
	require.Nil(t, waiter.Wait(t))
	require.Len(t, errs, 1, "one stuck waiter")
	e := errs[0]
	assert.Contains(t, e, fmt.Sprintf("goroutine %d is stuck waiting for a lock", waiter.G))
	assert.Contains(t, e, `to lock "stuck"`)
	assert.Regexp(t, fmt.Sprintf(`held by goroutine %d, which is blocked in chan send at \S+verify_test\.go:%d`, holder.G, lineOfFile(t, "// HOLDER BLOCKS")), e)
	assert.Regexp(t, fmt.Sprintf(`at \S+verify_test\.go:%d,`, lineOfFile(t, "// WAITER WAITS")), e)
}

// lineOfFile returns the line of this file that holds marker.
func lineOfFile(t *testing.T, marker string) int {
	t.Helper()
	src, err := os.ReadFile("verify_test.go")
	require.NoError(t, err)
	return lineOf(t, string(src), marker)
}

// addr is the address reports print for l.
func addr(l *mutex.Mutex) string { return fmt.Sprintf("%p", l) }

// TestStuckWaiterReportText: a StuckWaiter report names the waiter and
// where it waits, the lock, and what each holder does: blocked (with the
// state the runtime prints), waiting for another lock, or exited; and it
// says "leaked for certain" when the runtime's leak detection marked the
// waiter leaked (a build with GOEXPERIMENT=goroutineleakprofile).
func TestStuckWaiterReportText(t *testing.T) {
	l := &detect.LockInfo{Type: "*mutex.Mutex", Addr: 0x10, Name: "accounts"}
	other := &detect.LockInfo{Type: "*mutex.Mutex", Addr: 0x20, Name: "ledger"}
	at := func(line int) []detect.Frame {
		return []detect.Frame{{Function: "example.com/bank.f", File: "/bank/bank.go", Line: line}}
	}
	for _, tc := range []struct {
		name   string
		holder detect.Step
		state  string
		want   []string
	}{
		{"blocked", detect.Step{Goroutine: 8, Holds: l, State: "chan send", Stack: at(22)}, "chan receive",
			[]string{"held by goroutine 8, which is blocked in chan send at /bank/bank.go:22"}},
		{"waitgroup", detect.Step{Goroutine: 8, Holds: l, State: "sync.WaitGroup.Wait", Stack: at(23)}, "chan receive",
			[]string{"which is blocked in sync.WaitGroup.Wait at /bank/bank.go:23"}},
		{"running", detect.Step{Goroutine: 8, Holds: l, State: "running", Stack: at(24)}, "chan receive",
			[]string{"which is running at /bank/bank.go:24"}},
		{"waiting", detect.Step{Goroutine: 8, Holds: l, WaitsFor: other, State: "chan receive", Stack: at(25)}, "chan receive",
			[]string{`which is itself waiting to lock "ledger" (*mutex.Mutex 0x20) at /bank/bank.go:25`}},
		{"exited", detect.Step{Goroutine: 8, Holds: l}, "chan receive",
			[]string{"held by goroutine 8, which has exited", "stuck for certain"}},
		{"holder leaked", detect.Step{Goroutine: 8, Holds: l, State: "chan send (leaked)", Stack: at(22)}, "chan receive",
			[]string{"stuck for certain", "which is blocked in chan send (leaked) at /bank/bank.go:22"}},
		{"leaked", detect.Step{Goroutine: 8, Holds: l, State: "chan send (leaked)", Stack: at(22)}, "chan receive (leaked)",
			[]string{"leaked for certain", "which is blocked in chan send (leaked) at /bank/bank.go:22"}},
	} {
		r := &detect.Report{Kind: detect.StuckWaiter, Waited: time.Second, Steps: []detect.Step{
			{Goroutine: 7, WaitsFor: l, State: tc.state, Stack: at(30)}, tc.holder}}
		s := r.String()
		assert.Contains(t, s, "goroutine 7 is stuck waiting for a lock", tc.name)
		assert.Contains(t, s, `goroutine 7 has waited 1s to lock "accounts" (*mutex.Mutex 0x10) at /bank/bank.go:30,`, tc.name)
		for _, w := range tc.want {
			assert.Contains(t, s, w, tc.name)
		}
		if tc.name != "leaked" {
			assert.NotContains(t, s, "leaked for certain", tc.name)
		}
		if !strings.Contains(tc.name, "leaked") && tc.name != "exited" {
			assert.NotContains(t, s, "for certain", tc.name)
		}
	}
}

// TestVerifyNoneClaimsWaitTimeouts: a wait timeout, found by the
// watchdog's goroutine, fails the test of the goroutine that waits.
func TestVerifyNoneClaimsWaitTimeouts(t *testing.T) {
	t.Cleanup(detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(20*time.Millisecond), detect.WithReporter(nil)))
	var mu mutex.Mutex
	detect.SetName(&mu, "slow")
	ft := &fakeT{name: "TestSlow", errored: make(chan struct{}, 1)}
	release := make(chan struct{})
	p := testutil.Spawn(func() {
		detect.VerifyNone(ft)
		mu.Lock()
		held := make(chan struct{})
		waiter := testutil.Spawn(func() {
			close(held)
			mu.Lock() // the test's goroutine's child waits
			mu.Unlock()
		})
		<-held
		testutil.Await(t, ft.errored, "the wait-timeout report")
		mu.Unlock()
		require.Nil(t, waiter.Wait(t))
		<-release
		ft.end()
	})
	close(release)
	require.Nil(t, p.Wait(t))
	errs := ft.Errors()
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0], "goroutine blocked on a lock for")
	assert.Contains(t, errs[0], `to lock "slow"`)
}
