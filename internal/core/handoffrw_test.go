//go:build go1.25

package core

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// A writer of an RWLock whose LockContext is cancelled just as the writer
// lock is handed to it (starvation mode) releases the writer lock it was
// handed. A reader that queued behind it in between, seeing it as the
// writer, must be let in by that release, as by any writer's Unlock: in a
// bubble, where all of them run, the reader parks durably, and a release
// that forgets it leaves it blocked for good (the bubble's clock then
// runs to the test's hour). The hook holds the cancelled writer in
// abandon, before it looks at its queue entry, while the holder hands it
// the lock and the reader queues.
func TestRWHandoffPassedOnAdmitsReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l RWLock
		h := gid.Get()
		require.NoError(t, l.Lock(h, nil, ClassRWMutex))

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		proceed := make(chan struct{})
		testHookAbandon = func(hl *Lock) {
			if hl == &l.w {
				<-proceed
			}
		}
		defer func() { testHookAbandon = nil }()

		werr := make(chan error, 1)
		go func() { werr <- l.Lock(gid.Get(), ctx, ClassRWMutex) }()
		synctest.Wait() // the writer is queued on the writer lock
		require.Equal(t, 1, l.QueuedWriters())
		cancel()
		synctest.Wait() // the writer is held in abandon, still queued

		// As if the writer had waited past starvationThreshold: the
		// Unlock hands it the writer lock.
		l.w.state.Or(flagStarving)
		require.True(t, l.Unlock(h))
		require.NotEqual(t, h, l.Writer(), "handed to the writer")
		require.NotZero(t, l.Writer())

		rdone := make(chan error, 1)
		go func() {
			g := gid.Get()
			err := l.RLockSlow(g, nil, ClassRWMutex)
			if err == nil {
				l.RUnlock(g, false)
			}
			rdone <- err
		}()
		synctest.Wait() // the reader is queued behind the handed-to writer
		require.Equal(t, 1, l.QueuedReaders())

		close(proceed)
		require.ErrorIs(t, <-werr, context.Canceled)
		select {
		case err := <-rdone:
			require.NoError(t, err)
		case <-time.After(time.Hour):
			t.Error("the reader queued behind the writer that passed its hand-off on was never woken")
			require.NoError(t, l.Lock(h, nil, ClassRWMutex)) // wakes it
			require.True(t, l.Unlock(h))
			require.NoError(t, <-rdone)
		}
		assert.Zero(t, l.Writer())
		assert.Zero(t, l.Readers())
		assert.Zero(t, l.QueuedReaders())
	})
}
