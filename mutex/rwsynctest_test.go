//go:build go1.25

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

// Every way of waiting on an RWMutex is durably blocking inside a bubble:
// a writer queued behind a writer, a writer waiting for readers to leave,
// and a reader queued behind a writer. synctest.Wait returns while they
// wait (it would never return if they spun or slept).
func TestSynctestRWMutexDurablyBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rw mutex.RWMutex
		rw.RLock()
		order := make(chan string, 3)
		go func() { // waits for the reader to leave
			rw.Lock()
			order <- "w1"
			rw.Unlock()
		}()
		synctest.Wait()
		assert.True(t, mutex.RWDraining(&rw))
		go func() { // queued behind w1 on the writer lock
			rw.Lock()
			order <- "w2"
			rw.Unlock()
		}()
		go func() { // queued behind w1
			rw.RLock()
			order <- "r"
			rw.RUnlock()
		}()
		synctest.Wait()
		w, r := mutex.RWQueues(&rw)
		assert.Equal(t, 1, w)
		assert.Equal(t, 1, r)
		assert.Empty(t, order)
		rw.RUnlock()
		synctest.Wait()
		assert.Equal(t, "w1", <-order)
		// The reader was queued before w2 took its turn: it goes first.
		assert.Equal(t, "r", <-order)
		assert.Equal(t, "w2", <-order)
		assert.False(t, rw.Locked())
		assert.Zero(t, rw.Readers())
	})
}

// The bubble's clock drives the context forms: an hour-long wait on a
// lock that is never released ends exactly an hour later in bubble time,
// for a reader and for a writer waiting for readers.
func TestSynctestRWMutexContextDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rw mutex.RWMutex
		rw.Lock()
		start := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		res := make(chan error, 1)
		go func() { res <- rw.RLockContext(ctx) }()
		require.ErrorIs(t, <-res, context.DeadlineExceeded)
		assert.Equal(t, time.Hour, time.Since(start))
		rw.Unlock()

		rw.RLock()
		ctx2, cancel2 := context.WithTimeout(t.Context(), time.Hour)
		defer cancel2()
		go func() { res <- rw.LockContext(ctx2) }()
		require.ErrorIs(t, <-res, context.DeadlineExceeded)
		assert.Equal(t, 2*time.Hour, time.Since(start))
		assert.False(t, rw.Locked())
		rw.RUnlock()
		assert.Zero(t, rw.Readers())
	})
}
