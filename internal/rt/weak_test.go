//go:build go1.24

package rt

import (
	"runtime"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/compat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type weakObj struct {
	a, b int64
	_    *byte // not a tiny allocation
}

// TestWeakClearedAndLoad: a live object's weak pointer is not cleared and
// WeakLoad reads its words; once the object is collected (and its span
// swept, which runtime.GC waits for), the pointer reads as cleared and
// WeakLoad as failed; the zero Pointer is cleared from the start.
func TestWeakClearedAndLoad(t *testing.T) {
	var zero compat.Weak[weakObj]
	var w [2]int64
	assert.True(t, WeakCleared(zero))
	assert.False(t, WeakLoad(zero, 0, w[:]))

	p := func() compat.Weak[weakObj] {
		x := &weakObj{a: 7, b: -9}
		p := compat.MakeWeak(x)
		require.False(t, WeakCleared(p))
		require.True(t, WeakLoad(p, 0, w[:]))
		assert.Equal(t, [2]int64{7, -9}, w)
		x.b = 11
		require.True(t, WeakLoad(p, 8, w[1:]))
		assert.Equal(t, int64(11), w[1])
		runtime.KeepAlive(x)
		return p
	}()
	deadline := time.Now().Add(time.Minute)
	for !WeakCleared(p) {
		require.False(t, time.Now().After(deadline), "the object is never found collected")
		runtime.GC()
	}
	assert.Nil(t, p.Value())
	assert.False(t, WeakLoad(p, 0, w[:]))
}
