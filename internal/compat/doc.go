// Package compat holds the standard library features newer than the
// library's go line (go 1.22) that the library uses, each behind a build
// tag: the file tagged for the release that has the feature calls it,
// and the file tagged with its negation stands in for it on older
// releases. Each entry says what the stand-in loses.
//
//   - Weak pointers (weak.go, weak_nogo124.go): Weak and MakeWeak are
//     weak.Pointer and weak.Make from go1.24 on. Before, a Weak holds its
//     pointer strongly until its Clear (which exists only there) drops
//     it: Value never reports the object collected, and the object lives
//     at least as long as the Weak. A user of Weak that keeps many must
//     bound how many it keeps (see internal/core's registry of lock
//     metadata, meta_nogo124.go).
//   - Cleanups (cleanup.go, cleanup_nogo124.go): AddCleanup is
//     runtime.AddCleanup from go1.24 on; before, it sets a finalizer
//     (runtime.SetFinalizer) on ptr that calls the cleanup. ptr must then
//     point to the start of an allocation that has no finalizer, and the
//     object lives one collection longer.
//   - Bit operations on atomics (atomic.go, atomic_go123.go,
//     atomic_nogo123.go): Or and And on Uint32, Uint64, Int32 and Int64
//     are sync/atomic's from go1.23 on (one locked instruction on amd64
//     when the result is unused); before, compare-and-swap loops, which
//     retry under contention.
//
// A file tagged //go:build go1.24 is compiled at the go1.24 language
// version even though go.mod says go 1.22, so its code may use anything
// go1.24 has.
package compat
