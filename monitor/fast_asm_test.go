//go:build amd64 && gc && !race && !purego

package monitor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// TestFastWordFollowsMode: the assembly's one test is the fast word, which
// holds gid's offset except in Order mode.
func TestFastWordFollowsMode(t *testing.T) {
	require.NotZero(t, gid.Offset(), "gid has a fast goroutine ID on this platform")
	settleRecheck()
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		restore := detect.Configure(detect.WithMode(m))
		if m == detect.Order {
			assert.Zero(t, fastWord.Load(), "Order mode takes the Go path")
		} else {
			assert.Equal(t, gid.Offset(), fastWord.Load(), m.String())
		}
		restore()
	}
	assert.Equal(t, detect.CurrentMode() != detect.Order, fastWord.Load() != 0)
}

// TestAssemblyDefersToGo routes every Lock and Unlock through the Go code,
// as a missing fast goroutine ID does, and checks that the Monitor still
// works and still checks its owner.
func TestAssemblyDefersToGo(t *testing.T) {
	old := fastWord.Swap(0)
	defer fastWord.Store(old)

	var m Monitor
	m.Lock()
	assert.True(t, m.Owned())
	m.Unlock()
	assert.False(t, m.Locked())
	assert.Panics(t, m.Unlock, "the Go path's owner check")
	assert.False(t, m.Locked())
}

// settleRecheck makes one lock operation from a test's goroutine, which
// ends detect's wait for go test's log (see detect's recheckEnv); until
// then every lock operation takes the Go path, and the fast word is 0.
func settleRecheck() {
	var m Monitor
	m.Lock()
	m.Unlock()
}
