//go:build gc && (amd64 || arm64)

package gid_test

import (
	"testing"

	"github.com/petermattis/goid"
	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/gid"
)

func TestLocateFindsTheIDField(t *testing.T) {
	assert.NotZero(t, gid.Locate(goid.Get), "goid's ID not found in the runtime's g")
	// An answer that is not the goroutine's ID (what a moved field looks
	// like) is found on neither goroutine, so Get stays on the slow path.
	assert.Zero(t, gid.Locate(func() int64 { return -0x5eed1e55 }))
}

// TestGetSlowPath: with no verified offset, the assembly Get falls through
// to Slow (the tail call) and still returns the right ID.
func TestGetSlowPath(t *testing.T) {
	want := gid.Slow()
	restore := gid.SetOffset(0)
	got := gid.Get()
	restore()
	assert.Equal(t, want, got)
	assert.Equal(t, want, gid.Get(), "fast path after restoring the offset")
}
