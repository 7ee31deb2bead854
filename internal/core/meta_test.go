package core

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetasForgotten: the registry of locks with metadata lists every live
// one exactly once, each at the index it records, as locks are made and
// collected in waves; a collected lock's Meta leaves the registry.
func TestMetasForgotten(t *testing.T) {
	count := func() (n int, ok bool) {
		metas.mu.Lock()
		defer metas.mu.Unlock()
		for i, m := range metas.all {
			if m.idx != i {
				return 0, false
			}
		}
		return len(metas.all), true
	}
	base, ok := count()
	require.True(t, ok)
	keep := make([]*Lock, 0, 3000)
	var dropped atomic.Int32
	for wave := range 3 {
		for i := range 3000 {
			l := new(Lock)
			l.Meta(ClassMutex)
			if i%3 == wave { // a third kept, spread through the registry
				keep = append(keep, l)
			} else {
				runtime.AddCleanup(l, func(int) { dropped.Add(1) }, 0)
			}
		}
	}
	live := len(keep)
	deadline := time.Now().Add(time.Minute)
	for {
		runtime.GC()
		n, ok := count()
		require.True(t, ok, "an index out of step")
		// Earlier tests' locks may be collected meanwhile: at most base
		// others are listed.
		if n <= base+live && dropped.Load() == int32(3*3000-live) {
			break
		}
		require.False(t, time.Now().After(deadline), "registry at %d, want %d", n, base+live)
		runtime.Gosched()
	}
	seen := map[*Meta]int{}
	Metas(func(m *Meta) { seen[m]++ })
	for _, l := range keep {
		assert.Equal(t, 1, seen[l.PeekMeta()], "a live lock's Meta is listed once")
	}
	runtime.KeepAlive(keep)
}
