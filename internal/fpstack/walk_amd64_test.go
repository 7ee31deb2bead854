//go:build gc && !purego && go1.23

package fpstack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// Fake return PCs in the fake frame records.
const pcA, pcB = 0xa0a0, 0xb0b0

// fakeWalk runs Record with the caller's frame pointer replaced by one
// that kind picks, in or about two fake frame records on this stack,
// [next, pcA] then [next, pcB], and returns what Record wrote. It is
// nosplit, as recordFrom is, so the stack cannot move between taking the
// records' address and the walk.
//
//go:nosplit
func fakeWalk(kind int) []uintptr {
	var frames [4]uintptr
	var rec [1 + depth]uintptr
	base := uintptr(unsafe.Pointer(&frames[0]))
	frames[1], frames[3] = pcA, pcB
	fp := base
	switch kind {
	case 0: // the two records, the second ending the chain with zero
		frames[0], frames[2] = base+16, 0
	case 1: // a loop back to the first record
		frames[0], frames[2] = base+16, base
	case 2: // a second record that would end past the stack's top
		frames[0], frames[2] = base+16, ^uintptr(7)
	case 3: // a misaligned second record
		frames[0], frames[2] = base+16+4, 0
	case 4: // a pointer outside the stack (the heap's, below it)
		frames[0] = uintptr(unsafe.Pointer(&heapWord))
	case 5: // no frame pointer at all
		fp = 0
	case 6: // below the walk's own frame
		fp = base - 1<<12
	case 7: // a misaligned first one
		fp = base + 3
	}
	n := fpstack.RecordFrom(fp, rec[:])
	return append([]uintptr{}, rec[:n]...)
}

var heapWord [4]uintptr

// TestWalkStopsAtBadFramePointers: the walk follows a chain of records
// on the stack to its zero, and gives a frame pointer that cannot be one
// to runtime.Callers before reading through it (a loop, past the stack's
// top, misaligned, outside the stack, below the walk's own frame).
func TestWalkStopsAtBadFramePointers(t *testing.T) {
	rec := fakeWalk(0)
	require.Len(t, rec, 4)
	assert.Equal(t, []uintptr{0, pcA, pcB}, []uintptr{rec[0], rec[2], rec[3]})
	rec = fakeWalk(5) // no frame pointer at all: just the return PC
	require.Len(t, rec, 2)
	assert.Equal(t, uintptr(0), rec[0], "a walk that ended at the chain's zero")
	fs := fpstack.Frames(rec, depth)
	require.Len(t, fs, 1)
	assert.Equal(t, "github.com/locksmith-go/locksmith/internal/fpstack.recordFrom", fs[0].Function)

	for _, kind := range []int{1, 2, 3, 4, 6, 7} {
		rec := fakeWalk(kind)
		require.Greater(t, len(rec), 3, "kind %d", kind)
		assert.NotContains(t, rec, uintptr(pcB), "kind %d", kind)
		fs := fpstack.Frames(rec, depth)
		require.Greater(t, len(fs), 3, "kind %d", kind)
		assert.Equal(t, "github.com/locksmith-go/locksmith/internal/fpstack.recordFrom", fs[0].Function, "kind %d", kind)
		assert.Equal(t, pkg+"fakeWalk", fs[1].Function, "kind %d", kind)
		assert.Equal(t, pkg+"TestWalkStopsAtBadFramePointers", fs[2].Function, "kind %d", kind)
	}
}
