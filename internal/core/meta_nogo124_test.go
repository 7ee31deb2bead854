//go:build !go1.24

package core

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/compat"
)

// TestMetasBounded: without weak pointers the registry holds its locks
// strongly, and each scan brings it back under maxMetas by forgetting the
// oldest Metas whose locks are not in use: a forgotten Meta is gone and
// lets go of its lock, which is then collected; a held lock keeps its
// Meta however old it is; the newest stay; and a forgotten lock that is
// used again gets a new Meta.
func TestMetasBounded(t *testing.T) {
	require.False(t, compat.WeakPointers)
	registered := func() int {
		lockMetas()
		defer metas.mu.Unlock()
		return metas.all.Len()
	}
	held := new(Lock) // the oldest, but in use
	heldMeta := held.Meta(ClassMutex)
	require.True(t, held.FastAcquire(1))
	idle := new(Lock) // old, kept by the test but not in use
	idleMeta := idle.Meta(ClassMutex)

	const made = 2 * maxMetas
	var dropped atomic.Int32
	var newest *Meta
	for range made {
		l := new(Lock)
		newest = l.Meta(ClassMutex)
		compat.AddCleanup(l, func(int) { dropped.Add(1) }, 0)
	}
	deadline := time.Now().Add(time.Minute)
	for registered() > maxMetas || dropped.Load() < made-maxMetas {
		require.False(t, time.Now().After(deadline), "registry at %d, %d of %d dropped locks collected",
			registered(), dropped.Load(), made)
		runtime.GC()
		runtime.Gosched()
	}

	seen := map[*Meta]bool{}
	Metas(func(m *Meta) { seen[m] = true })
	assert.True(t, seen[heldMeta], "a held lock's Meta is kept")
	assert.False(t, heldMeta.Gone())
	assert.Same(t, held, heldMeta.Lock())
	assert.True(t, seen[newest], "the newest Meta is kept")
	assert.False(t, newest.Gone())

	assert.False(t, seen[idleMeta], "an old Meta of a lock not in use is forgotten")
	assert.True(t, idleMeta.Gone())
	assert.Nil(t, idleMeta.Lock(), "a forgotten Meta lets go of its lock")
	again := idle.Meta(ClassMutex)
	assert.NotSame(t, idleMeta, again, "a forgotten lock used again gets a new Meta")
	assert.NotEqual(t, idleMeta.ID, again.ID)
	assert.False(t, again.Gone())
	assert.Same(t, idle, again.Lock())

	require.True(t, held.FastRelease(1))
	runtime.KeepAlive(held)
	runtime.KeepAlive(idle)
}
