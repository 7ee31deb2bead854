//go:build go1.24

package core

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TestMetasForgotten: the registry of locks with metadata lists every live
// one exactly once, each beside its own weak pointer, as locks are made and
// collected in waves (more of them than the scan visits per hold of the
// registry's lock); a collected lock's Meta leaves the registry and is
// marked gone, and a live one's stays.
func TestMetasForgotten(t *testing.T) {
	count := func() (n int, ok bool) {
		lockMetas()
		defer metas.mu.Unlock()
		for i := range metas.all.Len() {
			if e := metas.all.At(i); e.m.lock != e.lock {
				return 0, false
			}
		}
		return metas.all.Len(), true
	}
	base, ok := count()
	require.True(t, ok)
	keep := make([]*Lock, 0, 3000)
	var dropped atomic.Int32
	var gone []*Meta
	for wave := range 3 {
		for i := range 3000 {
			l := new(Lock)
			m := l.Meta(ClassMutex)
			if i%3 == wave { // a third kept, spread through the registry
				keep = append(keep, l)
			} else {
				runtime.AddCleanup(l, func(int) { dropped.Add(1) }, 0)
				gone = append(gone, m)
			}
		}
	}
	live := len(keep)
	deadline := time.Now().Add(time.Minute)
	for {
		runtime.GC()
		n, ok := count()
		require.True(t, ok, "an entry's weak pointer not its Meta's")
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
		assert.False(t, l.PeekMeta().Gone())
	}
	for _, m := range gone {
		assert.Zero(t, seen[m], "a collected lock's Meta is not listed")
		assert.True(t, m.Gone())
		assert.Nil(t, m.Lock())
	}
	runtime.KeepAlive(keep)
}

// TestMetaRevived: a lock in an object that a finalizer revives loses its
// weak pointer in the collection that queued the finalizer, and its Meta
// is forgotten; used again, the lock gets a new Meta, registered, that
// names it, and the holds a Cond wait lost move over to it.
func TestMetaRevived(t *testing.T) {
	type object struct {
		l Lock
		_ *byte
	}
	revived := make(chan *object, 1)
	var old *Meta
	func() {
		o := new(object)
		old = o.l.Meta(ClassMutex)
		o.l.LoseHolds(ClassMutex, 7, 2, nil)
		runtime.SetFinalizer(o, func(o *object) { revived <- o })
	}()
	deadline := time.Now().Add(testutil.Liveness)
	var o *object
	for o == nil || !old.Gone() {
		runtime.GC()
		select {
		case o = <-revived:
		default:
			require.False(t, time.Now().After(deadline), "finalizer run %v, Meta gone %v", o != nil, old.Gone())
			runtime.Gosched()
		}
	}
	assert.Nil(t, old.Lock(), "the collection cleared the weak pointer")
	m := o.l.Meta(ClassMutex)
	require.NotSame(t, old, m)
	assert.False(t, m.Gone())
	assert.Same(t, &o.l, m.Lock())
	assert.Same(t, m, o.l.PeekMeta())
	listed := false
	Metas(func(x *Meta) { listed = listed || x == m })
	assert.True(t, listed, "the new Meta is registered")
	_, quiet, ok := o.l.TakeLost(7)
	assert.True(t, ok && quiet, "the lost holds moved to the new Meta")
	runtime.KeepAlive(o)
}

// BenchmarkMetaScan is the registry's scan, which runs once per garbage
// collection, with n live locks and none collected: ns/op is one scan,
// ns/lock the same per registered lock, and gc-ns a forced collection
// (runtime.GC, the mean of three) of the same heap, for scale. The locks
// carry core's Meta only, the smallest metadata a lock has: with detect's
// engine each Meta also carries a graph node, a heap three times as large
// for the collector to mark and the same scan.
func BenchmarkMetaScan(b *testing.B) {
	for _, n := range []int{1000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			locks := make([]*Lock, n)
			for i := range locks {
				locks[i] = new(Lock)
				locks[i].Meta(ClassMutex)
			}
			scanMetas() // whatever earlier tests left collected
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				scanMetas()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/lock")
			t0 := time.Now()
			for range 3 {
				runtime.GC()
			}
			b.ReportMetric(float64(time.Since(t0).Nanoseconds())/3, "gc-ns")
			runtime.KeepAlive(locks)
		})
	}
}
