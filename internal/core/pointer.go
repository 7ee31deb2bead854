package core

import (
	"sync/atomic"
	"unsafe"
)

// Pointer is atomic.Pointer[T] for the pointers that Order mode loads on
// every acquisition (a lock's Meta, the order graph's edges and stacks).
// Its Load is built without checkptr's instrumentation (go:nocheckptr),
// which the race detector turns on in every package that instantiates
// atomic.Pointer: there each Load's conversion of the loaded
// unsafe.Pointer to *T looks up the heap object at both ends of the
// pointed-to value (checkptrAlignment, two findObject calls). The
// conversion here is of a pointer stored from a *T, which checkptr has
// nothing to find wrong with. With atomic.Pointer, these checks (and
// package detect's nodeOf, see edgeAt) are a large share of the CPU time
// of the Order-mode hooks under -race, and none is left in the profile
// with this type: `go test -race -run '^$' -bench
// 'OrderShortLivedGoroutines/shared' -cpuprofile cpu.out ./detect`.
// Without -race the pragma changes nothing: Load
// inlines as atomic.Pointer's does.
//
// The zero value is a nil pointer. A Pointer must not be copied after
// first use.
type Pointer[T any] struct {
	_ [0]*T // as atomic.Pointer: no conversion between Pointer types
	_ noCopy
	v unsafe.Pointer
}

// noCopy lets go vet's copylocks check report copies of a Pointer, as it
// does of an atomic.Pointer.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// Load atomically loads and returns the value stored in p.
//
//go:nocheckptr
func (p *Pointer[T]) Load() *T { return (*T)(atomic.LoadPointer(&p.v)) }

// Store atomically stores v into p.
func (p *Pointer[T]) Store(v *T) { atomic.StorePointer(&p.v, unsafe.Pointer(v)) }

// CompareAndSwap executes the compare-and-swap operation for p.
func (p *Pointer[T]) CompareAndSwap(old, new *T) bool {
	return atomic.CompareAndSwapPointer(&p.v, unsafe.Pointer(old), unsafe.Pointer(new))
}
