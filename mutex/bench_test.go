package mutex_test

import (
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func BenchmarkMutexUncontended(b *testing.B) {
	b.Run("sync.Mutex", func(b *testing.B) {
		var m sync.Mutex
		for b.Loop() {
			m.Lock()
			m.Unlock()
		}
	})
	b.Run("mutex.Mutex", func(b *testing.B) {
		var m mutex.Mutex
		for b.Loop() {
			m.Lock()
			m.Unlock()
		}
	})
	b.Run("monitor.Monitor", func(b *testing.B) {
		var m monitor.Monitor
		for b.Loop() {
			m.Lock()
			m.Unlock()
		}
	})
	b.Run("monitor.Reentry", func(b *testing.B) {
		var m monitor.Monitor
		m.Lock()
		for b.Loop() {
			m.Lock()
			m.Unlock()
		}
		m.Unlock()
	})
}
