package condvar_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// rwLock is what the tests of a Cond on a read lock need of
// mutex.RWMutex and monitor.RWMonitor.
type rwLock interface {
	sync.Locker
	TryLock() bool
	RLock()
	RUnlock()
	RLocker() sync.Locker
	Owned() bool
	Locked() bool
	ReadOwned() bool
	Readers() int
}

// A readKind is a read-write lock whose RLocker a Cond is bound to; holds
// is the number of read holds its waiters take (more than one only where
// read locking is reentrant).
type readKind struct {
	name  string
	holds int
	new   func() rwLock
}

func readKinds() []readKind {
	return []readKind{
		{"mutex.RWMutex", 1, func() rwLock { return new(mutex.RWMutex) }},
		{"monitor.RWMonitor", 3, func() rwLock { return new(monitor.RWMonitor) }},
	}
}

// readHolds returns the calling goroutine's read holds of rw.
func readHolds(rw rwLock) int {
	if m, ok := rw.(*monitor.RWMonitor); ok {
		return m.ReadHoldCount()
	}
	if rw.ReadOwned() {
		return 1
	}
	return 0
}

// parkedReaders waits until c counts want waiters and no goroutine holds
// rw for reading: the waiters have released their read holds.
func parkedReaders(t *testing.T, rw rwLock, c *condvar.Cond, want int) {
	t.Helper()
	testutil.WaitFor(t, "readers parked", func() bool {
		if !rw.TryLock() {
			return false
		}
		defer rw.Unlock()
		return c.Waiters() == want
	})
}

// TestCondRLockerWaitForms: a Cond of rw.RLocker() works as sync.Cond's on
// sync.RWMutex's RLocker, in every wait form: the wait requires the read
// lock, releases every read hold of the caller (a writer gets in while it
// waits), and restores the count before it returns, whether a Signal, a
// Broadcast, a timeout or a cancellation ended it.
func TestCondRLockerWaitForms(t *testing.T) {
	forms := []string{"Wait/Signal", "Wait/Broadcast", "WaitTimeout", "WaitTimeout/timed out",
		"WaitContext", "WaitContext/cancelled", "WaitWhile", "WaitUntil"}
	type result struct {
		signalled bool
		holds     int
	}
	for _, k := range readKinds() {
		for _, form := range forms {
			t.Run(k.name+"/"+form, func(t *testing.T) {
				rw := k.new()
				c := condvar.New(rw.RLocker())
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ready := false // written under the write lock, read under the read lock
				res := make(chan result, 1)
				go func() {
					for range k.holds {
						rw.RLock()
					}
					r := result{signalled: true}
					switch form {
					case "Wait/Signal", "Wait/Broadcast":
						for !ready {
							c.Wait()
						}
					case "WaitTimeout":
						r.signalled = c.WaitTimeout(testutil.Liveness)
					case "WaitTimeout/timed out":
						r.signalled = c.WaitTimeout(time.Millisecond)
					case "WaitContext":
						r.signalled = c.WaitContext(context.Background()) == nil
					case "WaitContext/cancelled":
						r.signalled = c.WaitContext(ctx) == nil
					case "WaitWhile":
						c.WaitWhile(func() bool { return !ready })
					case "WaitUntil":
						c.WaitUntil(func() bool { return ready })
					}
					r.holds = readHolds(rw)
					for range r.holds {
						rw.RUnlock()
					}
					res <- r
				}()
				if form == "WaitTimeout/timed out" {
					assert.Equal(t, result{false, k.holds}, testutil.Await(t, res, "timed-out wait"))
					return
				}
				parkedReaders(t, rw, c, 1)
				rw.Lock()
				assert.Zero(t, rw.Readers(), "the waiter's read holds are released while it waits")
				ready = true
				switch form {
				case "Wait/Broadcast":
					c.Broadcast()
				case "WaitContext/cancelled":
					cancel()
				default:
					c.Signal()
				}
				rw.Unlock()
				want := result{form != "WaitContext/cancelled", k.holds}
				assert.Equal(t, want, testutil.Await(t, res, "wait"), "the read holds are restored")
				assert.Zero(t, c.Waiters())
				assert.Zero(t, rw.Readers())
			})
		}
	}
}

// TestCondRLockerSignalBroadcast: readers waiting on a read Cond at the
// same time (they share the lock) are woken one per Signal, in FIFO order,
// and all by a Broadcast; Signal and Broadcast need no lock, as with
// sync.Cond. A &Cond{L: rw.RLocker()} literal is the same Cond.
func TestCondRLockerSignalBroadcast(t *testing.T) {
	const readers = 4
	for _, k := range readKinds() {
		for _, literal := range []bool{false, true} {
			name := k.name + "/New"
			if literal {
				name = k.name + "/literal"
			}
			t.Run(name, func(t *testing.T) {
				rw := k.new()
				c := condvar.New(rw.RLocker())
				if literal {
					c = &condvar.Cond{L: rw.RLocker()}
				}
				woke := make(chan int, readers)
				for i := range readers {
					go func() {
						for range k.holds {
							rw.RLock()
						}
						c.Wait()
						n := readHolds(rw)
						for range n {
							rw.RUnlock()
						}
						woke <- i*10 + n
					}()
					parkedReaders(t, rw, c, i+1) // so that the FIFO order is known
				}
				c.Signal()
				assert.Equal(t, 0*10+k.holds, testutil.Await(t, woke, "first reader"), "Signal wakes the oldest waiter, with its holds")
				assert.Equal(t, readers-1, c.Waiters())
				c.Signal()
				assert.Equal(t, 1*10+k.holds, testutil.Await(t, woke, "second reader"))
				c.Broadcast()
				got := []int{testutil.Await(t, woke, "reader"), testutil.Await(t, woke, "reader")}
				assert.ElementsMatch(t, []int{2*10 + k.holds, 3*10 + k.holds}, got)
				assert.Zero(t, c.Waiters())
				assert.Zero(t, rw.Readers())
			})
		}
	}
}

// TestCondRLockerMisuse: every wait form on a read Cond panics with
// ErrNotOwner without a read lock, and with ErrReadLocker by the writer
// (whose wait would keep the write lock; an RWMonitor's writer is refused
// also while it holds read holds). A refused wait changes nothing:
// the caller keeps what it held, the lock stays usable, and a waiter
// already queued stays queued and is signalled.
func TestCondRLockerMisuse(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	ops := []struct {
		name string
		call func(c *condvar.Cond)
	}{
		{"Wait", (*condvar.Cond).Wait},
		{"WaitTimeout", func(c *condvar.Cond) { c.WaitTimeout(time.Hour) }},
		{"WaitTimeout(0)", func(c *condvar.Cond) { c.WaitTimeout(0) }},
		{"WaitContext", func(c *condvar.Cond) { _ = c.WaitContext(context.Background()) }},
		{"WaitContext(done)", func(c *condvar.Cond) { _ = c.WaitContext(done) }},
		{"WaitWhile", func(c *condvar.Cond) { c.WaitWhile(func() bool { return false }) }},
		{"WaitUntil", func(c *condvar.Cond) { c.WaitUntil(func() bool { return true }) }},
	}
	for _, k := range readKinds() {
		t.Run(k.name, func(t *testing.T) {
			rw := k.new()
			c := condvar.New(rw.RLocker())
			queued := queueWaiter(t, rw.RLocker(), c, 1, func() bool { return c.WaitTimeout(testutil.Liveness) })
			for _, op := range ops {
				err := testutil.MustPanicErr(t, func() { op.call(c) })
				assert.ErrorIs(t, err, condvar.ErrNotOwner, "%s without the read lock", op.name)
				assert.NotErrorIs(t, err, condvar.ErrReadLocker, op.name)
				assert.Contains(t, err.Error(), "condvar: wait without holding the lock (goroutine ")

				rw.Lock()
				err = testutil.MustPanicErr(t, func() { op.call(c) })
				assert.ErrorIs(t, err, condvar.ErrReadLocker, "%s by the writer", op.name)
				assert.Contains(t, err.Error(), "condvar: wait on a Cond of rw.RLocker() by goroutine ")
				assert.Contains(t, err.Error(), "for writing")
				assert.True(t, rw.Owned(), "%s: the refused writer still holds the write lock", op.name)
				assert.NotErrorIs(t, err, condvar.ErrNotOwner, op.name)
				if m, ok := rw.(*monitor.RWMonitor); ok {
					m.RLock()
					err = testutil.MustPanicErr(t, func() { op.call(c) })
					assert.ErrorIs(t, err, condvar.ErrReadLocker, "%s by the writer with a read hold", op.name)
					assert.Equal(t, [2]int{1, 1}, [2]int{m.WriteHoldCount(), m.ReadHoldCount()}, op.name)
					m.RUnlock()
				}
				rw.Unlock()
			}
			assert.Equal(t, 1, c.Waiters(), "the queued waiter is still waiting")
			testutil.Usable(t, rw)
			c.Signal()
			assert.True(t, testutil.Await(t, queued, "queued waiter"))
		})
	}
}

// TestCondRLockerRetakeRefused: the read lock's retake after a signal is
// refused by deadlock detection when it would close a cycle (the waiter
// holds a, which the writer now waits for, and the writer holds rw). Wait
// panics with the deadlock, holding nothing of rw, and each of the
// caller's deferred RUnlocks panics with an error that matches
// ErrNotOwner and the deadlock, so recover() sees the deadlock; rw and a
// are usable afterwards.
func TestCondRLockerRetakeRefused(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0), detect.WithReporter(func(*detect.Report) {}))()
	for _, k := range readKinds() {
		t.Run(k.name, func(t *testing.T) {
			rw := k.new()
			a := new(mutex.Mutex)
			c := condvar.New(rw.RLocker())
			refused := make(chan any, 1)
			go func() {
				defer func() { refused <- recover() }()
				a.Lock()
				defer a.Unlock()
				for range k.holds {
					rw.RLock()
					defer rw.RUnlock()
				}
				c.Wait()
				t.Error("Wait returned")
			}()
			parkedReaders(t, rw, c, 1)
			writer := make(chan struct{})
			go func() {
				defer close(writer)
				rw.Lock()
				defer rw.Unlock()
				a.Lock() // waits for the Cond waiter
				a.Unlock()
			}()
			testutil.WaitFor(t, "writer blocked on a", func() bool { return len(detecttest.BlockedOn(a)) == 1 })
			c.Signal() // the waiter's retake is the last to block: it is refused
			v := testutil.Await(t, refused, "refused waiter")
			err, _ := v.(error)
			require.ErrorIs(t, err, detect.ErrDeadlock)
			assert.ErrorIs(t, err, condvar.ErrNotOwner, "the deferred RUnlock accounts for the lost hold")
			var de *detect.DeadlockError
			assert.True(t, errors.As(err, &de))
			testutil.Await(t, writer, "writer")
			assert.Zero(t, rw.Readers())
			assert.False(t, a.Locked())
			testutil.Usable(t, rw)
		})
	}
}
