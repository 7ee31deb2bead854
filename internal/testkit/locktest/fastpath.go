package locktest

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// FastWordFollowsMode checks the switch of a lock's assembly fast paths:
// word, the package's fast word and the assembly's one test, holds gid's
// offset except in Order mode.
func FastWordFollowsMode(t *testing.T, word *atomic.Uintptr, c Lock) {
	require.NotZero(t, gid.Offset(), "gid has a fast goroutine ID on this platform")
	// One lock operation from a test's goroutine ends detect's wait for
	// go test's log (see detect's recheckEnv); until then every lock
	// operation takes the Go path, and the fast word is 0.
	m := c.New()
	m.Lock()
	m.Unlock()
	for _, mode := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		restore := detect.Configure(detect.WithMode(mode))
		if mode == detect.Order {
			assert.Zero(t, word.Load(), "Order mode takes the Go path")
		} else {
			assert.Equal(t, gid.Offset(), word.Load(), mode.String())
		}
		restore()
	}
	assert.Equal(t, detect.CurrentMode() != detect.Order, word.Load() != 0)
}

// AssemblyDefersToGo routes every Lock and Unlock through the Go code, as
// a missing fast goroutine ID does (word 0), and checks that the lock
// still works and still checks its owner.
func AssemblyDefersToGo(t *testing.T, word *atomic.Uintptr, c Lock) {
	old := word.Swap(0)
	defer word.Store(old)

	m := c.New()
	m.Lock()
	assert.True(t, m.Owned())
	m.Unlock()
	assert.False(t, m.Locked())
	assert.Panics(t, m.Unlock, "the Go path's owner check")
	assert.False(t, m.Locked())
}
