//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package mutex_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/mutex"
)

// A goroutine parked in LockTimeout is durably blocked, and its timer runs
// on the bubble's fake clock: an hour-long wait on a mutex that is never
// released ends exactly an hour later in bubble time; a wait that the
// holder's Unlock ends first gets the mutex.
func TestSynctestMutexLockTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		start := time.Now()
		res := make(chan bool, 1)
		go func() { res <- m.LockTimeout(time.Hour) }()
		synctest.Wait()
		assert.Equal(t, 1, mutex.QueueLen(&m), "LockTimeout parked")
		assert.False(t, <-res)
		assert.Equal(t, time.Hour, time.Since(start))
		assert.Zero(t, mutex.QueueLen(&m))

		go func() {
			ok := m.LockTimeout(time.Hour)
			if ok {
				m.Unlock()
			}
			res <- ok
		}()
		synctest.Wait()
		assert.Equal(t, 1, mutex.QueueLen(&m), "LockTimeout parked")
		m.Unlock()
		assert.True(t, <-res)
		assert.Equal(t, time.Hour, time.Since(start), "no bubble time passed")
		assert.False(t, m.Locked())
	})
}
