package mutex_test

import (
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// timedMutex is a Mutex for the LockTimeout suites that mutex and monitor
// share.
var timedMutex = locktest.Lock{
	Name:     "mutex",
	New:      func() locktest.TimedLock { return new(mutex.Mutex) },
	QueueLen: func(l locktest.TimedLock) int { return mutex.QueueLen(l.(*mutex.Mutex)) },
	Holds: func(l locktest.TimedLock) int {
		if l.Owned() {
			return 1
		}
		return 0
	},
}

func TestMutexLockTimeout(t *testing.T)            { locktest.LockTimeout(t, timedMutex) }
func TestMutexLockTimeoutRacesUnlock(t *testing.T) { locktest.LockTimeoutRacesUnlock(t, timedMutex) }
func TestMutexLockTimeoutAllocs(t *testing.T)      { locktest.LockTimeoutAllocs(t, timedMutex) }

// LockTimeout by the holder is recursive locking, whatever the timeout:
// it panics with ErrRecursiveLock and leaves m held by the caller.
func TestMutexLockTimeoutRecursive(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 0, -1} {
		var m mutex.Mutex
		m.Lock()
		v := testutil.Catch(func() { m.LockTimeout(d) })
		err, ok := v.(error)
		require.Truef(t, ok, "LockTimeout(%v) by the holder: want an error panic, got %#v", d, v)
		assert.ErrorIs(t, err, mutex.ErrRecursiveLock, "LockTimeout(%v)", d)
		assert.Contains(t, err.Error(), "mutex: deadlock; recursive locking")
		assert.True(t, m.Owned(), "LockTimeout(%v): the holder lost m", d)
		m.Unlock()
		assert.False(t, m.Locked())
	}
}

var errNotOwnedAfterTrue = errors.New("LockTimeout returned true without the lock")

// LockTimeout on a contended mutex keeps mutual exclusion: the hammer in
// every detection mode, half of the acquisitions timed.
func TestMutexLockTimeoutHammer(t *testing.T) {
	iters := 2000
	if testing.Short() {
		iters = 300
	}
	locktest.ForEachMode(t, func(t *testing.T) {
		locktest.Hammer(t, timedMutex, 2, 6, iters, func(m *mutex.Mutex, g, i int) {
			if (g+i)%2 == 0 {
				m.Lock()
				return
			}
			for !m.LockTimeout(time.Duration(i%7) * time.Microsecond) {
				runtime.Gosched()
			}
			if !m.Owned() {
				panic(errNotOwnedAfterTrue)
			}
		})
	})
}
