package detect_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestRefusalKeyTakenWhereItWaited: two transfers meet in a retry loop,
// each taking its second lock with LockContext. The one that closes the
// cycle is refused and backs off. In every other round the other
// goroutine gives up its own wait (its context is cancelled) while the
// report is being made, and goes on into its back-off. The problem is
// keyed on where each goroutine waited, so the hundred rounds are one
// report, and its other step names the LockContext call, never the
// back-off the goroutine moved on to.
func TestRefusalKeyTakenWhereItWaited(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	var a, b mutex.Mutex
	const rounds = 100
	for round := range rounds {
		ctx, cancel := context.WithCancel(context.Background())
		aHeld, moved, resume := make(chan struct{}), make(chan struct{}), make(chan struct{})
		b.Lock() // before the other goroutine starts: it must wait for b
		other := testutil.Spawn(func() {
			a.Lock()
			defer a.Unlock()
			close(aHeld)
			if err := b.LockContext(ctx); err != nil { // OTHER WAITS
				close(moved)
				backOff(resume)
				return
			}
			b.Unlock()
		})
		<-aHeld
		detecttest.WaitParked(t, &b, other.ID(t))
		hook := func() {}
		if round%2 == 1 {
			hook = func() {
				cancel()
				<-moved
			}
		}
		restore := detect.SetDeadlockHook(hook)
		err := a.LockContext(context.Background())
		restore()
		detecttest.DeadlockError(t, err)
		b.Unlock() // back off
		close(resume)
		require.Nil(t, other.Wait(t))
		cancel()
	}
	all := rec.All(detect.Deadlock)
	require.Len(t, all, 1, "one cycle, one report:\n%s", rec)
	r := all[0]
	assert.Equal(t, rounds, r.Seen().Times)
	require.Len(t, r.Steps, 2)
	fn, ok := detecttest.OwnFrame(r.Steps[1].Stack, ownPrefix)
	require.True(t, ok, "the other step's stack has a frame of the test:\n%s", r)
	assert.False(t, strings.Contains(fn, "backOff"), "the other step is where it waited, not its back-off: %s\n%s", fn, r)
}

// backOff is where the other transfer goes once it has given up its wait.
//
//go:noinline
func backOff(resume <-chan struct{}) { <-resume }

// TestStacksCutTheLibrarysOwnCalls: a waiter caught while the lock arms
// its timer (time.NewTimer called from the locks) has the user's call of
// LockTimeout as its first frame, as when it is parked; a goroutine
// blocked in the standard library on its own keeps those frames.
func TestStacksCutTheLibrarysOwnCalls(t *testing.T) {
	dump := []byte(`goroutine 7 [running]:
time.NewTimer(0x3b9aca00)
	/go/src/time/sleep.go:96 +0x45
github.com/locksmith-go/locksmith/internal/core.(*deadlineTimer).arm(...)
	/lib/internal/core/parker.go:200 +0x20
github.com/locksmith-go/locksmith/mutex.(*Mutex).LockTimeout(0xc000012340, 0x3b9aca00)
	/lib/mutex/mutex.go:211 +0x40
example.com/bank.Transfer(0xc000012340, 0xc000012350)
	/bank/bank.go:12 +0x30
created by example.com/bank.TestX in goroutine 6
	/bank/bank_test.go:9 +0x6c

goroutine 8 [sync.WaitGroup.Wait]:
sync.runtime_SemacquireWaitGroup(0xc0000a0008, 0x0)
	/go/src/runtime/sema.go:114 +0x2e
sync.(*WaitGroup).Wait(0xc0000a0000)
	/go/src/sync/waitgroup.go:206 +0x85
example.com/bank.drain()
	/bank/bank.go:30 +0x30
`)
	got := detect.ParseStacks(dump, map[int64]bool{7: true, 8: true})
	require.NotEmpty(t, got[7])
	assert.Equal(t, "example.com/bank.Transfer", got[7][0].Function)
	require.Len(t, got[8], 3)
	assert.Equal(t, "sync.runtime_SemacquireWaitGroup", got[8][0].Function)
	assert.Equal(t, "sync.(*WaitGroup).Wait", got[8][1].Function)
}

// TestRefusalIsOneLine: with the default reporter, a LockTimeout or
// LockContext refused because its wait would close a cycle prints one
// line, once per problem, and the count goes on in Report.Seen; a Lock's
// refusal, which panics, prints the whole report.
func TestRefusalIsOneLine(t *testing.T) {
	// WithReporter(nil): the default reporter, with a problem table of
	// this test's own.
	t.Cleanup(detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0), detect.WithReporter(nil)))
	var out lockedBuffer
	defer detect.SetStderr(&out)()
	a, b := &mutex.Mutex{}, &mutex.Mutex{}
	var seen detect.Seen
	for range 3 {
		other := halfCycle(t, a, b)
		ok := a.LockTimeout(testutil.Liveness)
		assert.False(t, ok, "refused")
		b.Unlock()
		require.Nil(t, other.Wait(t))
	}
	for range 2 {
		other := halfCycle(t, a, b)
		de := detecttest.DeadlockError(t, a.LockContext(context.Background()))
		assert.True(t, de.Report.BackedOff)
		seen = de.Report.Seen()
		b.Unlock()
		require.Nil(t, other.Wait(t))
	}
	printed := out.String()
	assert.Equal(t, 2, strings.Count(printed, "\n"), "one line per problem (the LockTimeout and the LockContext call sites):\n%s", printed)
	assert.Equal(t, 2, strings.Count(printed, "locksmith: refused a wait that would close a deadlock cycle; the caller backs off: goroutine "), printed)
	assert.NotContains(t, printed, "Found one locksmith deadlock")
	assert.Contains(t, printed, "refusal_test.go:")
	assert.Equal(t, 2, seen.Times, "Seen counts every refusal")

	out.Reset()
	other := halfCycle(t, a, b)
	de := detecttest.DeadlockError(t, testutil.Catch(a.Lock))
	assert.False(t, de.Report.BackedOff)
	b.Unlock()
	require.Nil(t, other.Wait(t))
	assert.Contains(t, out.String(), "Found one locksmith deadlock", "a Lock's refusal is reported in full")
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuffer) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}
