package detect_test

// Faults: what the detector says of a goroutine that exits holding a lock.

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exitHolding starts a goroutine that takes the monitor twice and the
// mutex once and returns without unlocking, and returns its ID once it
// has exited.
func exitHolding(t *testing.T, mon *monitor.Monitor, mu *mutex.Mutex) int64 {
	t.Helper()
	id := make(chan int64, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		mon.Lock()
		mon.Lock()
		mu.Lock()
		id <- testutil.GoroutineID()
	}()
	testutil.Await(t, done, "holder")
	g := <-id
	// The goroutine has returned; wait until the runtime no longer lists it.
	deadline := time.Now().Add(testutil.Liveness)
	for goroutineListed(g) {
		require.False(t, time.Now().After(deadline), "goroutine %d still listed", g)
		runtime.Gosched()
	}
	return g
}

func goroutineListed(g int64) bool {
	return strings.Contains(testutil.AllStacks(), fmt.Sprintf("goroutine %d [", g))
}

// TestFaultExitedHolderNamedByDump: Go runs no code when a goroutine exits,
// so locks it held stay held for good (Ruby would release its Monitor).
// Dump, in Order mode, lists them under the goroutine, marked as exited,
// with their hold counts.
func TestFaultExitedHolderNamedByDump(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
	var (
		mon monitor.Monitor
		mu  mutex.Mutex
	)
	detect.SetName(&mon, "exited-holder monitor")
	detect.SetName(&mu, "exited-holder mutex")
	g := exitHolding(t, &mon, &mu)

	assert.True(t, mon.Locked())
	assert.True(t, mu.Locked())
	testutil.OnOther(t, func() {
		assert.False(t, mu.TryLock(), "the mutex stays held")
		assert.False(t, mon.TryLock(), "the monitor stays held")
	})
	var buf bytes.Buffer
	detect.Dump(&buf)
	dump := buf.String()
	assert.Contains(t, dump, fmt.Sprintf("goroutine %d (exited) holds:", g), dump)
	assert.Regexp(t, `"exited-holder monitor" \(\*monitor\.Monitor 0x[0-9a-f]+\) \(hold count 2\)`, dump)
	assert.Regexp(t, `"exited-holder mutex" \(\*mutex\.Mutex 0x[0-9a-f]+\) \(hold count 1\)`, dump)
	// Until Dump has run: a lock collected before it is forgotten, and
	// not listed.
	runtime.KeepAlive(&mon)
	runtime.KeepAlive(&mu)
}

// TestFaultExitedHolderNamedByWaitTimeout: a goroutine blocked on a lock
// whose holder exited is reported by the wait-timeout watchdog, naming the
// holder (with no stack: it has exited), and Dump says the holder has
// exited. Nothing can release the lock, so the waiter uses LockContext and
// gives up; it returns the context's error without the lock.
func TestFaultExitedHolderNamedByWaitTimeout(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		for _, kind := range []string{"mutex", "monitor"} {
			t.Run(mode.String()+"/"+kind, func(t *testing.T) {
				reports := make(chan *detect.Report, 16)
				defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(20*time.Millisecond),
					detect.WithReporter(func(r *detect.Report) { reports <- r }))()
				var (
					mon monitor.Monitor
					mu  mutex.Mutex
				)
				name := "orphaned " + kind
				var l interface {
					LockContext(context.Context) error
					Owned() bool
					Locked() bool
				} = &mu
				detect.SetName(&mu, name)
				if kind == "monitor" {
					l = &mon
					detect.SetName(&mon, name)
				}
				holder := exitHolding(t, &mon, &mu)

				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				type result struct {
					err   error
					owned bool
					g     int64
				}
				res := make(chan result, 1)
				waiterID := make(chan int64, 1)
				go func() {
					waiterID <- testutil.GoroutineID()
					err := l.LockContext(ctx)
					res <- result{err, l.Owned(), testutil.GoroutineID()}
				}()
				waiter := <-waiterID

				r := testutil.Await(t, reports, "wait-timeout report")
				require.Equal(t, detect.WaitTimeout, r.Kind, r.String())
				require.Len(t, r.Steps, 2, r.String())
				assert.Equal(t, waiter, r.Steps[0].Goroutine)
				assert.Equal(t, name, r.Steps[0].WaitsFor.Name)
				assert.Equal(t, holder, r.Steps[1].Goroutine)
				assert.Equal(t, name, r.Steps[1].Holds.Name)
				assert.Empty(t, r.Steps[1].Stack, "an exited goroutine has no stack")
				text := r.String()
				assert.Contains(t, text, fmt.Sprintf("which is held by goroutine %d", holder))
				assert.Contains(t, text, "(no stack: the goroutine has exited, or was not found)")

				var buf bytes.Buffer
				detect.Dump(&buf)
				assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`goroutine %d waiting \S+ to lock "%s" .*, held by goroutine %d, which has exited`,
					waiter, name, holder)), buf.String())

				cancel()
				got := testutil.Await(t, res, "waiter")
				assert.ErrorIs(t, got.err, context.Canceled)
				assert.False(t, got.owned, "LockContext returned an error but the caller holds the lock")
				assert.True(t, l.Locked(), "still held by the exited goroutine")
				select {
				case r := <-reports:
					t.Errorf("a second report:\n%s", r)
				default:
				}
			})
		}
	}
}
