package compat

import "sync/atomic"

// Uint32, Uint64, Int32 and Int64 are sync/atomic's types with Or and And
// methods on every supported release (sync/atomic has them from go1.23
// on). Or sets the bits of mask and And keeps only those of mask; both
// return the old value.
type (
	Uint32 struct{ atomic.Uint32 }
	Uint64 struct{ atomic.Uint64 }
	Int32  struct{ atomic.Int32 }
	Int64  struct{ atomic.Int64 }
)
