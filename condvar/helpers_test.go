package condvar_test

import (
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
	testutil.WaitFor(t, "waiter queued", func() bool { return c.Waiters() == want })
	return res
}

// skipWithoutTickets skips a test that drives the ticket path through
// its hooks (SetTicketHook, SetMovedHook) when built with -tags purego:
// no wait takes a ticket then, so the hooks never run. The behaviour such
// a test checks on the queued path is covered by the other tests.
func skipWithoutTickets(t *testing.T) {
	t.Helper()
	if !condvar.TicketPath {
		t.Skip("built with -tags purego: no wait takes a ticket, so the ticket hooks never run")
	}
}
