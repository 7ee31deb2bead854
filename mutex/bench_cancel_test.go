//go:build unix

package mutex_test

import (
	"context"
	"testing"

	"github.com/locksmith-go/locksmith/mutex"
)

// BenchmarkMutexCancel is LockContext's cancellation path: a wait on a
// held Mutex, parked, then cancelled by another goroutine. Each iteration
// also starts that goroutine, which the lock's own cost is read against.
func BenchmarkMutexCancel(b *testing.B) {
	var m mutex.Mutex
	held := make(chan struct{})
	release := make(chan struct{})
	go func() {
		m.Lock()
		close(held)
		<-release
		m.Unlock()
	}()
	<-held
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for mutex.QueueLen(&m) == 0 {
			}
			cancel()
		}()
		if err := m.LockContext(ctx); err == nil {
			b.Fatal("LockContext succeeded on a held Mutex")
		}
		cancel()
	}
	close(release)
}
