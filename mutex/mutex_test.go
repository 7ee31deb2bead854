package mutex_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

var _ sync.Locker = (*mutex.Mutex)(nil)

func TestZeroMutex(t *testing.T) {
	var m mutex.Mutex
	assert.False(t, m.Locked(), "zero Mutex is unlocked")
	assert.False(t, m.Owned())

	m.Lock()
	assert.True(t, m.Locked())
	assert.True(t, m.Owned())
	m.Unlock()
	assert.False(t, m.Locked())

	var m2 mutex.Mutex
	require.True(t, m2.TryLock(), "TryLock of a zero Mutex")
	m2.Unlock()

	var m3 mutex.Mutex
	require.NoError(t, m3.LockContext(context.Background()), "LockContext of a zero Mutex")
	m3.Unlock()
	assert.False(t, m3.Locked())
}

func TestMutexSentinelsAreShared(t *testing.T) {
	assert.Same(t, mutex.ErrNotOwner, monitor.ErrNotOwner)
	assert.Same(t, mutex.ErrNotOwner, condvar.ErrNotOwner)
	assert.NotErrorIs(t, mutex.ErrRecursiveLock, mutex.ErrNotOwner)
	assert.NotErrorIs(t, mutex.ErrNotOwner, mutex.ErrRecursiveLock)
}

func TestMutexOwnedAndLocked(t *testing.T) {
	var m mutex.Mutex
	m.Lock()
	owned, locked := make(chan bool, 1), make(chan bool, 1)
	go func() {
		owned <- m.Owned()
		locked <- m.Locked()
	}()
	assert.False(t, testutil.Await(t, owned, "Owned"), "Owned from a goroutine that does not hold m")
	assert.True(t, testutil.Await(t, locked, "Locked"), "Locked from a goroutine that does not hold m")
	assert.True(t, m.Owned())
	m.Unlock()
	assert.False(t, m.Owned())
	assert.False(t, m.Locked())
}

func TestMutexLockBlocksUntilUnlock(t *testing.T) {
	var m mutex.Mutex
	m.Lock()
	got := make(chan bool)
	go func() {
		m.Lock()
		got <- m.Owned()
		m.Unlock()
		close(got)
	}()
	testutil.WaitFor(t, "second Lock queued", func() bool { return mutex.QueueLen(&m) == 1 })
	select {
	case <-got:
		t.Fatal("Lock returned while the mutex was held")
	default:
	}
	m.Unlock()
	assert.True(t, testutil.Await(t, got, "Lock after Unlock"))
	testutil.Await(t, got, "Unlock")
	assert.False(t, m.Locked())
	assert.Zero(t, mutex.QueueLen(&m))
}

// TestMutexMisuse checks every broken contract: the panic, its sentinel,
// its message, and that the mutex is unchanged and usable afterwards. It
// runs in every detection mode, since the owner checks belong to the
// Mutex itself.
func TestMutexMisuse(t *testing.T) {
	type state int
	const (
		free     state = iota // m is unlocked
		heldByMe              // the test goroutine holds m
	)
	for _, tc := range []struct {
		name     string
		before   state
		stranger bool // the misuse is made by another goroutine
		misuse   func(m *mutex.Mutex)
		sentinel error
		// msg returns substrings the message must contain, given the
		// goroutine making the misuse and the holder.
		msg func(me, holder int64) []string
	}{
		{
			name: "recursive Lock", before: heldByMe,
			misuse: (*mutex.Mutex).Lock, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "recursive locking", fmt.Sprintf("goroutine %d", me)}
			},
		},
		{
			name: "recursive LockContext", before: heldByMe,
			misuse: func(m *mutex.Mutex) { _ = m.LockContext(context.Background()) }, sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "recursive locking", fmt.Sprintf("goroutine %d", me)}
			},
		},
		{
			// The doc promises the panic whenever the caller holds m; a
			// done context must not turn a broken contract into an error.
			name: "recursive LockContext with a done context", before: heldByMe,
			misuse: func(m *mutex.Mutex) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_ = m.LockContext(ctx)
			},
			sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "recursive locking", fmt.Sprintf("goroutine %d", me)}
			},
		},
		{
			name: "LockContext with a nil context", before: free,
			misuse: func(m *mutex.Mutex) {
				var ctx context.Context
				_ = m.LockContext(ctx)
			},
			sentinel: mutex.ErrNilContext,
			msg:      func(me, _ int64) []string { return []string{"mutex: ", "nil context"} },
		},
		{
			// Recursive locking is the broken contract reported first.
			name: "recursive LockContext with a nil context", before: heldByMe,
			misuse: func(m *mutex.Mutex) {
				var ctx context.Context
				_ = m.LockContext(ctx)
			},
			sentinel: mutex.ErrRecursiveLock,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "recursive locking", fmt.Sprintf("goroutine %d", me)}
			},
		},
		{
			name: "Unlock by non-owner", before: heldByMe, stranger: true,
			misuse: (*mutex.Mutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, holder int64) []string {
				return []string{"mutex: ", fmt.Sprintf("goroutine %d", me), fmt.Sprintf("held by goroutine %d", holder)}
			},
		},
		{
			name: "Unlock of unlocked mutex", before: free,
			misuse: (*mutex.Mutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "unlock of unlocked mutex", fmt.Sprintf("goroutine %d", me)}
			},
		},
		{
			name: "Unlock of unlocked mutex by another goroutine", before: free, stranger: true,
			misuse: (*mutex.Mutex).Unlock, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "unlock of unlocked mutex", fmt.Sprintf("goroutine %d", me)}
			},
		},
		{
			name: "double Unlock", before: free,
			misuse: func(m *mutex.Mutex) { m.Lock(); m.Unlock(); m.Unlock() }, sentinel: mutex.ErrNotOwner,
			msg: func(me, _ int64) []string {
				return []string{"mutex: ", "unlock of unlocked mutex", fmt.Sprintf("goroutine %d", me)}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locktest.ForEachMode(t, func(t *testing.T) {
				var m mutex.Mutex
				self := testutil.GoroutineID()
				if tc.before == heldByMe {
					m.Lock()
				}
				err, me := testutil.MisusePanic(t, tc.stranger, func() { tc.misuse(&m) })
				testutil.ErrorIsOnly(t, err, tc.sentinel, mutex.ErrRecursiveLock, mutex.ErrNotOwner, mutex.ErrNilContext)
				for _, s := range tc.msg(me, self) {
					assert.Contains(t, err.Error(), s)
				}

				// Unchanged: the holder still holds it and can unlock it;
				// a free mutex is still free.
				assert.Zero(t, mutex.QueueLen(&m))
				if tc.before == heldByMe {
					assert.True(t, m.Owned(), "holder lost the mutex after a misuse panic")
					assert.True(t, m.Locked())
					stolen, _ := testutil.OnOther(t, func() {
						if m.TryLock() {
							panic("TryLock succeeded on a held mutex")
						}
					})
					assert.Nil(t, stolen)
					m.Unlock()
				}
				assert.False(t, m.Locked(), "mutex not free after its holder unlocked")
				require.True(t, m.TryLock(), "mutex not usable after a misuse panic")
				m.Unlock()
			})
		})
	}
}

func TestMutexTryLock(t *testing.T) { locktest.TryLock(t, timedMutex) }

func TestMutexLockContext(t *testing.T) { locktest.LockContext(t, timedMutex) }

func TestMutexLockContextCancelRacesUnlock(t *testing.T) {
	locktest.LockContextCancelRacesUnlock(t, timedMutex)
}

func TestMutexHammer(t *testing.T) {
	ctx := context.Background()
	// Every way to take the mutex, in rotation.
	lock := func(m *mutex.Mutex, g, i int) {
		switch (g + i) % 3 {
		case 0:
			m.Lock()
		case 1:
			if err := m.LockContext(ctx); err != nil {
				panic(err)
			}
		default:
			for !m.TryLock() {
				runtime.Gosched()
			}
		}
	}
	locktest.HammerSweep(t, timedMutex, lock)
}

func TestMutexNoAllocs(t *testing.T) {
	var m mutex.Mutex
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() { m.Lock(); m.Unlock() }), "Lock/Unlock")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.TryLock() {
			m.Unlock()
		}
	}), "TryLock/Unlock")
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if m.LockContext(ctx) == nil {
			m.Unlock()
		}
	}), "LockContext/Unlock")
}
