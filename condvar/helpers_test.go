package condvar_test

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveness is the one generous deadline for anything that must happen
// eventually. Nothing is timed against it; it only turns a hang into a
// failure.
const liveness = 10 * time.Second

// goroutineID parses the calling goroutine's ID from runtime.Stack,
// independently of the library's own source of identity.
func goroutineID() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// catch runs f and returns what it panicked with, or nil.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// onOther runs f on a new goroutine and returns f's panic value (nil if
// none) and the goroutine's ID.
func onOther(t testing.TB, f func()) (v any, id int64) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		id = goroutineID()
		v = catch(f)
	}()
	await(t, done, "goroutine running the misuse")
	return v, id
}

// await waits for ch to be closed or to deliver a value, failing the test
// after the liveness deadline.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(liveness)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, liveness)
		panic("unreachable")
	}
}

// waitFor polls cond, yielding the processor between looks, until it holds
// or the liveness deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %v", what, liveness)
		}
		runtime.Gosched()
	}
}

// forEachMode runs f once per detection mode, restoring the configuration
// after. The wait-timeout watchdog is kept off: no test here waits long.
func forEachMode(t *testing.T, f func(t *testing.T)) {
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run("detect="+m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
			f(t)
		})
	}
}

// A lockKind is a lock a Cond can be bound to.
type lockKind struct {
	name       string
	ownerAware bool
	// new returns a fresh lock, and a function that reports whether the
	// calling goroutine holds it (nil for a lock that cannot tell).
	new func() (l sync.Locker, held func() bool)
}

// ownedLocker is a user's owner-aware lock: not a locksmith type, but a
// sync.Locker with an Owned method.
type ownedLocker struct{ *mutex.Mutex }

func lockKinds() []lockKind {
	return []lockKind{
		{"sync.Mutex", false, func() (sync.Locker, func() bool) { return new(sync.Mutex), nil }},
		{"mutex.Mutex", true, func() (sync.Locker, func() bool) { m := new(mutex.Mutex); return m, m.Owned }},
		{"monitor.Monitor", true, func() (sync.Locker, func() bool) { m := new(monitor.Monitor); return m, m.Owned }},
		{"owner-aware Locker", true, func() (sync.Locker, func() bool) {
			m := ownedLocker{new(mutex.Mutex)}
			return m, m.Owned
		}},
	}
}

// forEachKind runs f as a subtest per lock kind, with a fresh lock and a
// Cond bound to it.
func forEachKind(t *testing.T, f func(t *testing.T, k lockKind, l sync.Locker, held func() bool, c *condvar.Cond)) {
	for _, k := range lockKinds() {
		t.Run(k.name, func(t *testing.T) {
			l, held := k.new()
			f(t, k, l, held, condvar.New(l))
		})
	}
}

// queueWaiter starts a goroutine that locks l and calls wait (which must
// wait on c), and returns once it is queued on c, with a channel that
// delivers wait's result once the goroutine has unlocked l. want is the
// number of waiters c must have once this one is queued.
func queueWaiter[T any](t *testing.T, l sync.Locker, c *condvar.Cond, want int, wait func() T) <-chan T {
	t.Helper()
	res := make(chan T, 1)
	go func() {
		l.Lock()
		r := wait()
		l.Unlock()
		res <- r
	}()
	waitFor(t, "waiter queued", func() bool { return c.Waiters() == want })
	return res
}
