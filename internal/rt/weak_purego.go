//go:build purego || !go1.24

package rt

import "github.com/locksmith-go/locksmith/internal/compat"

// WeakCleared reports whether the collector has cleared p: its object was
// found unreachable (or p is the zero Weak). Built with purego it calls
// p.Value, which, during a collection's marking, shades the object and so
// keeps it, and everything it points to, alive through that collection.
// Before go1.24 a compat.Weak holds its object strongly, and only its
// Clear clears it.
func WeakCleared[T any](p compat.Weak[T]) bool { return p.Value() == nil }

// WeakLoad loads, each atomically, the len(words) 64-bit words of p's
// object from offset off on (off must be 8-byte aligned, and the words
// inside the object), and reports whether p was not cleared. Built with
// purego, or before go1.24, it calls p.Value, as WeakCleared does.
func WeakLoad[T any](p compat.Weak[T], off uintptr, words []int64) bool {
	return weakLoadValue(p, off, words)
}

// WeakPeeks reports whether WeakCleared and WeakLoad read the runtime's
// handle, making nothing reachable: never built with purego or before
// go1.24, where they call Value.
func WeakPeeks() bool { return false }
