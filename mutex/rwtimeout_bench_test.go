//go:build unix

package mutex_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// BenchmarkRWMutexTimeout reports what the timed calls cost, allocations
// included: uncontended pairs against the plain ones (and sync.RWMutex's
// in the same run), and a write that times out behind a reader (the
// writer takes the writer lock, then waits for the reader to leave)
// against LockContext with a context.WithTimeout made for the call.
func BenchmarkRWMutexTimeout(b *testing.B) {
	pair := func(name string, lock func(rw *mutex.RWMutex) bool, unlock func(rw *mutex.RWMutex)) {
		b.Run(name, func(b *testing.B) {
			var rw mutex.RWMutex
			testutil.RunPairs(b, func(n int) {
				for range n {
					if lock(&rw) {
						unlock(&rw)
					}
				}
			})
		})
	}
	b.Run("read/sync.RWMutex", func(b *testing.B) {
		var rw sync.RWMutex
		testutil.RunPairs(b, testutil.SyncRWReadPairs(&rw))
	})
	pair("read/RLock", func(rw *mutex.RWMutex) bool { rw.RLock(); return true }, (*mutex.RWMutex).RUnlock)
	pair("read/RLockTimeout", func(rw *mutex.RWMutex) bool { return rw.RLockTimeout(time.Second) }, (*mutex.RWMutex).RUnlock)
	pair("write/Lock", func(rw *mutex.RWMutex) bool { rw.Lock(); return true }, (*mutex.RWMutex).Unlock)
	pair("write/LockTimeout", func(rw *mutex.RWMutex) bool { return rw.LockTimeout(time.Second) }, (*mutex.RWMutex).Unlock)

	const wait = 10 * time.Microsecond
	behindReader := func(b *testing.B, timed func(rw *mutex.RWMutex) bool) {
		var rw mutex.RWMutex
		locked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			rw.RLock()
			close(locked)
			<-release
			rw.RUnlock()
		}()
		<-locked
		testutil.RunPairs(b, func(n int) {
			for range n {
				if timed(&rw) {
					b.Fatal("got an rwmutex held for reading")
				}
			}
		})
		close(release)
		<-done
	}
	b.Run("expires-behind-reader/LockTimeout", func(b *testing.B) {
		behindReader(b, func(rw *mutex.RWMutex) bool { return rw.LockTimeout(wait) })
	})
	b.Run("expires-behind-reader/LockContext+WithTimeout", func(b *testing.B) {
		behindReader(b, func(rw *mutex.RWMutex) bool {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			return rw.LockContext(ctx) == nil
		})
	})
}
