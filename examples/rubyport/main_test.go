package main

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, `rubyport: a MonitorMixin class and Thread::Mutex, ported to locksmith
push_all(t1 t2 t3): size 3; push ran inside push_all's mon_synchronize with hold count 2
pop, pop, pop: t1 t2 t3
3 threads wait in wait_while { @tickets.empty? }
each push signalled one of them; they popped u1 u2 u3
pop_within(0.02) on an empty queue: "", false (nil: wait timed out)
m.synchronize { m.synchronize { } }: rescued "mutex: deadlock; recursive locking" (errors.Is ErrRecursiveLock: true)
after the rescue the mutex is unlocked: locked? false; try_lock: true
m.unlock when unlocked: rescued "mutex: unlock of unlocked mutex" (errors.Is ErrNotOwner: true)
`, out.String())
}

// TestRecursiveLockingLeavesTheMutexUsable checks what Ruby promises after
// the ThreadError: the mutex is intact and its holder can unlock it.
func TestRecursiveLockingLeavesTheMutexUsable(t *testing.T) {
	var m mutex.Mutex
	m.Lock()
	err := rescue(m.Lock)
	require.True(t, errors.Is(err, mutex.ErrRecursiveLock), "%v", err)
	assert.True(t, m.Owned(), "the holder still holds it")
	m.Unlock()
	assert.False(t, m.Locked())
}

// TestMonitorMixinReentry checks that mon_synchronize inside
// mon_synchronize re-enters, and that the monitor is free after.
func TestMonitorMixinReentry(t *testing.T) {
	q := NewTicketQueue()
	q.Push("x")
	assert.Equal(t, 1, q.pushHolds)
	q.PushAll("y")
	assert.Equal(t, 2, q.pushHolds)
	assert.Equal(t, 2, q.Size())
	assert.False(t, q.Locked())
}
