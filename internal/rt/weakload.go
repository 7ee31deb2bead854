package rt

import (
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/compat"
)

// weakLoadValue is WeakLoad through p.Value, which shades the object
// during a collection's marking: the portable fallback.
func weakLoadValue[T any](p compat.Weak[T], off uintptr, words []int64) bool {
	o := p.Value()
	if o == nil {
		return false
	}
	for i := range words {
		words[i] = atomic.LoadInt64((*int64)(unsafe.Add(unsafe.Pointer(o), off+8*uintptr(i))))
	}
	runtime.KeepAlive(o)
	return true
}
