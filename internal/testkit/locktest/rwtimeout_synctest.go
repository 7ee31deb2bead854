//go:build go1.25

package locktest

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
)

// RWTimeoutSynctest: inside a testing/synctest bubble, goroutines parked
// in LockTimeout and RLockTimeout are durably blocked and their timers run
// on the bubble's fake clock, so each wait ends exactly at its deadline
// in bubble time: a reader queued behind a writer, a writer waiting for a
// reader to leave, and a writer that waits first for the writer lock and
// then for a reader, whose two waits share the one deadline.
func RWTimeoutSynctest(t *testing.T, c RWLock) {
	synctest.Test(t, func(t *testing.T) {
		rw := c.New()
		rw.Lock()
		start := time.Now()
		res := make(chan bool, 1)
		go func() { res <- rw.RLockTimeout(time.Hour) }()
		synctest.Wait()
		assert.Equal(t, 1, c.queuedReaders(rw), "RLockTimeout parked")
		assert.False(t, <-res)
		assert.Equal(t, time.Hour, time.Since(start))
		assert.Zero(t, c.queuedReaders(rw))
		rw.Unlock()

		rw.RLock()
		start = time.Now()
		go func() { res <- rw.LockTimeout(time.Hour) }()
		synctest.Wait()
		assert.True(t, c.Draining(rw), "LockTimeout parked for the reader")
		assert.False(t, <-res)
		assert.Equal(t, time.Hour, time.Since(start))
		assert.False(t, c.Draining(rw))
		assert.False(t, rw.Locked())
		rw.RUnlock()

		// The writer lock is handed to the timed writer half an hour in,
		// with a reader admitted ahead of it that stays.
		rw.Lock()
		start = time.Now()
		release := make(chan struct{})
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			rw.RLock()
			<-release
			rw.RUnlock()
		}()
		go func() { res <- rw.LockTimeout(time.Hour) }()
		synctest.Wait()
		w, r := c.Queues(rw)
		assert.Equal(t, [2]int{1, 1}, [2]int{w, r}, "the writer and the reader queued")
		time.Sleep(30 * time.Minute) // bubble time: the clock under test
		rw.Unlock()
		synctest.Wait()
		assert.True(t, c.Draining(rw), "the timed writer waits for the reader")
		assert.False(t, <-res)
		assert.Equal(t, time.Hour, time.Since(start), "one deadline for both waits")
		assert.False(t, rw.Locked())
		assert.Equal(t, 1, rw.Readers())
		close(release)
		<-readerDone
		assert.Zero(t, rw.Readers())
	})
}
