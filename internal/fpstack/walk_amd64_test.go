//go:build gc && !purego

package fpstack_test

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// Fake return PCs in the fake frame records.
const pcA, pcB = 0xa0a0, 0xb0b0

// fakeWalk runs Record with the caller's frame pointer replaced by one
// that kind picks, in or about two fake frame records on this stack,
// [next, pcA] then [next, pcB], and returns what Record wrote after the
// return PC into recordFrom. It is nosplit, as recordFrom is, so the
// stack cannot move between taking the records' address and the walk.
//
//go:nosplit
func fakeWalk(kind int) []uintptr {
	var frames [4]uintptr
	var rec [8]uintptr
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
	return append([]uintptr{}, rec[2:n]...)
}

var heapWord [4]uintptr

func TestWalkStopsAtBadFramePointers(t *testing.T) {
	for kind, want := range [][]uintptr{
		{pcA, pcB},
		{pcA, pcB},
		{pcA, pcB},
		{pcA},
		{pcA},
		{},
		{},
		{},
	} {
		assert.Equal(t, want, fakeWalk(kind), "kind %d", kind)
	}
}
