//go:build !go1.24

package compat

import "runtime"

// AddCleanup arranges for cleanup(arg) to run some time after ptr becomes
// unreachable. It stands in for runtime.AddCleanup, which go1.24 brings,
// with a finalizer: ptr must point to the start of an allocation with no
// finalizer, and the object lives until the collection after the one that
// found it unreachable.
func AddCleanup[T, S any](ptr *T, cleanup func(S), arg S) {
	runtime.SetFinalizer(ptr, func(*T) { cleanup(arg) })
}
