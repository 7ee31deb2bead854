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
	if raceBuild {
		t.Skip("a race build's Meta carries the links of internal/core/racehb_race.go")
	}
	state, slab := int(unsafe.Sizeof(lockState{})), int(unsafe.Sizeof(lockSlab{}))
	assert.Equal(t, 256, state)
	assert.LessOrEqual(t, slab, 4096)
	assert.Greater(t, slab+state, 4096, "a slot more would fit")
}
