package mutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/mutex"
)

// BenchmarkMutexLockTimeout reports what a timed Lock costs, allocations
// included, next to the context-based way to write the same wait:
// uncontended (LockTimeout against Lock), and a wait that times out on a
// mutex held by another goroutine (LockTimeout against LockContext with a
// context.WithTimeout made for the call).
func BenchmarkMutexLockTimeout(b *testing.B) {
	b.Run("uncontended/Lock", func(b *testing.B) {
		var m mutex.Mutex
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			m.Lock()
			m.Unlock()
		}
	})
	b.Run("uncontended/LockTimeout", func(b *testing.B) {
		var m mutex.Mutex
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if m.LockTimeout(time.Second) {
				m.Unlock()
			}
		}
	})

	const wait = 10 * time.Microsecond
	held := func(b *testing.B, timed func(m *mutex.Mutex) bool) {
		var m mutex.Mutex
		locked, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			m.Lock()
			close(locked)
			<-release
			m.Unlock()
		}()
		<-locked
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if timed(&m) {
				b.Fatal("got a mutex held by another goroutine")
			}
		}
		close(release)
		<-done
	}
	b.Run("expires/LockTimeout", func(b *testing.B) {
		held(b, func(m *mutex.Mutex) bool { return m.LockTimeout(wait) })
	})
	b.Run("expires/LockContext+WithTimeout", func(b *testing.B) {
		held(b, func(m *mutex.Mutex) bool {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			return m.LockContext(ctx) == nil
		})
	})
}
