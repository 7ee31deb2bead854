//go:build gc && (amd64 || arm64) && !purego

package rt

import (
	"testing"

	"github.com/petermattis/goid"
	"github.com/stretchr/testify/assert"
)

func TestLocateFindsTheIDField(t *testing.T) {
	assert.NotZero(t, Locate(goid.Get), "goid's ID not found in the runtime's g")
	// An answer that is not the goroutine's ID (what a moved field looks
	// like) is found on neither goroutine, so Get stays on the slow path.
	assert.Zero(t, Locate(func() int64 { return -0x5eed1e55 }))
}

// TestGetSlowPath: with no verified offset, the assembly Goid falls through
// to SlowGoid (the tail call) and still returns the right ID.
func TestGetSlowPath(t *testing.T) {
	want := SlowGoid()
	restore := SetOffset(0)
	got := Goid()
	restore()
	assert.Equal(t, want, got)
	assert.Equal(t, want, Goid(), "fast path after restoring the offset")
}
