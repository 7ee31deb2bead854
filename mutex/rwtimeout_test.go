package mutex_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// timedRWMutex is an RWMutex's write side for the LockTimeout suites that
// Mutex and Monitor run.
var timedRWMutex = locktest.Lock{
	Name: "rwmutex",
	New:  func() locktest.TimedLock { return new(mutex.RWMutex) },
	QueueLen: func(l locktest.TimedLock) int {
		w, _ := mutex.RWQueues(l.(*mutex.RWMutex))
		return w
	},
	Holds: func(l locktest.TimedLock) int {
		if l.Owned() {
			return 1
		}
		return 0
	},
}

var timedRWMutexRW = locktest.RWLock{
	Name: "rwmutex",
	New:  func() locktest.TimedRWLock { return new(mutex.RWMutex) },
	Queues: func(l locktest.TimedRWLock) (int, int) {
		return mutex.RWQueues(l.(*mutex.RWMutex))
	},
	Draining: func(l locktest.TimedRWLock) bool { return mutex.RWDraining(l.(*mutex.RWMutex)) },
}

func TestRWMutexLockTimeout(t *testing.T) { locktest.LockTimeout(t, timedRWMutex) }
func TestRWMutexLockTimeoutRacesUnlock(t *testing.T) {
	locktest.LockTimeoutRacesUnlock(t, timedRWMutex)
}
func TestRWMutexLockTimeoutAllocs(t *testing.T)  { locktest.LockTimeoutAllocs(t, timedRWMutex) }
func TestRWMutexRLockTimeout(t *testing.T)       { locktest.RLockTimeout(t, timedRWMutexRW) }
func TestRWMutexRLockTimeoutAllocs(t *testing.T) { locktest.RLockTimeoutAllocs(t, timedRWMutexRW) }
func TestRWMutexTimeoutCycles(t *testing.T)      { locktest.RWTimeoutCycles(t, timedRWMutexRW) }

// The timed calls by a holder are recursive locking, whatever the
// timeout: they panic with ErrRecursiveLock, naming the case as Lock and
// RLock do, and the holder keeps its hold.
func TestRWMutexTimeoutRecursive(t *testing.T) {
	for _, d := range []time.Duration{time.Hour, 0, -1} {
		for _, tc := range []struct {
			name  string
			write bool // the caller holds the write lock, else a read lock
			call  func(rw *mutex.RWMutex)
			msg   string
		}{
			{"LockTimeout by the writer", true, func(rw *mutex.RWMutex) { rw.LockTimeout(d) }, "mutex: deadlock; recursive locking: lock"},
			{"RLockTimeout by the writer", true, func(rw *mutex.RWMutex) { rw.RLockTimeout(d) }, "mutex: deadlock; recursive locking: rlock"},
			{"LockTimeout by a reader", false, func(rw *mutex.RWMutex) { rw.LockTimeout(d) }, "mutex: deadlock; read-to-write upgrade"},
			{"RLockTimeout by a reader", false, func(rw *mutex.RWMutex) { rw.RLockTimeout(d) }, "mutex: deadlock; recursive read locking"},
		} {
			var rw mutex.RWMutex
			if tc.write {
				rw.Lock()
			} else {
				rw.RLock()
			}
			v := testutil.Catch(func() { tc.call(&rw) })
			err, ok := v.(error)
			require.Truef(t, ok, "%s (%v): want an error panic, got %#v", tc.name, d, v)
			assert.ErrorIs(t, err, mutex.ErrRecursiveLock, "%s (%v)", tc.name, d)
			assert.Contains(t, err.Error(), tc.msg, "%s (%v)", tc.name, d)
			if tc.write {
				assert.True(t, rw.Owned(), "%s (%v): the writer lost rw", tc.name, d)
				assert.Zero(t, rw.Readers(), "%s (%v)", tc.name, d)
				rw.Unlock()
			} else {
				assert.True(t, rw.ReadOwned(), "%s (%v): the reader lost rw", tc.name, d)
				assert.Equal(t, 1, rw.Readers(), "%s (%v)", tc.name, d)
				assert.False(t, rw.Locked(), "%s (%v)", tc.name, d)
				rw.RUnlock()
			}
			require.True(t, rw.TryLock(), "%s (%v): rw usable", tc.name, d)
			rw.Unlock()
		}
	}
}

func TestRWMutexTimeoutHammer(t *testing.T) {
	iters := 2000
	if testing.Short() {
		iters = 300
	}
	locktest.RWTimeoutHammer(t, timedRWMutexRW, 6, iters)
}

func TestRWMutexTimeoutOrder(t *testing.T) { locktest.RWTimeoutOrder(t, timedRWMutexRW) }
