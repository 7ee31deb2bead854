//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package mutex_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/mutex"
)

// A goroutine blocked in Lock is durably blocked: synctest.Wait returns
// while it waits. (Were it blocked the way sync.Mutex blocks, synctest.Wait
// would never return and the test would time out.)
func TestSynctestMutexLockDurablyBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		got := false
		done := make(chan struct{})
		go func() {
			defer close(done)
			m.Lock()
			got = true
			m.Unlock()
		}()
		synctest.Wait()
		assert.False(t, got, "Lock returned while the mutex was held")
		assert.Equal(t, 1, mutex.QueueLen(&m))
		m.Unlock()
		<-done
		assert.True(t, got)
		assert.False(t, m.Locked())
	})
}

func TestSynctestMutexLockContextDurablyBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		ctx, cancel := context.WithCancel(t.Context())
		res := make(chan error, 1)
		go func() { res <- m.LockContext(ctx) }()
		synctest.Wait()
		assert.Equal(t, 1, mutex.QueueLen(&m))
		cancel()
		assert.ErrorIs(t, <-res, context.Canceled)
		assert.True(t, m.Owned())
		assert.Zero(t, mutex.QueueLen(&m))
		m.Unlock()
	})
}

// The bubble's fake clock drives LockContext's deadline: an hour-long wait
// on a mutex that is never released ends at once, exactly an hour later
// in bubble time.
func TestSynctestMutexLockContextDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		defer m.Unlock()
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		res := make(chan error, 1)
		go func() { res <- m.LockContext(ctx) }()
		require.ErrorIs(t, <-res, context.DeadlineExceeded)
		assert.Equal(t, time.Hour, time.Since(start))
		assert.Zero(t, mutex.QueueLen(&m))
	})
}
