package detect

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestSlabFitsSizeClass: a slab of lockStates fills the 4096-byte size
// class, as slabSize's comment says (a byte more takes the 4864-byte
// class, 11 % more memory a lock).
func TestSlabFitsSizeClass(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the sizes are a 64-bit platform's")
	}
	assert.EqualValues(t, 256, unsafe.Sizeof(lockState{}))
	assert.LessOrEqual(t, unsafe.Sizeof(lockSlab{}), uintptr(4096))
	assert.Greater(t, unsafe.Sizeof(lockSlab{})+unsafe.Sizeof(lockState{}), uintptr(4096), "a slot more would fit")
}
