//go:build go1.24

package compat

import "runtime"

// AddCleanup arranges for cleanup(arg) to run some time after ptr becomes
// unreachable: runtime.AddCleanup. ptr must point to the start of an
// allocation with no finalizer (the stand-in before go1.24 sets one).
func AddCleanup[T, S any](ptr *T, cleanup func(S), arg S) {
	runtime.AddCleanup(ptr, cleanup, arg)
}
