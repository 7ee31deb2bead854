// Package gid is locksmith's only source of goroutine identity.
//
// The goroutine ID is a field of the runtime's g. Where that field lives
// changes between Go releases, and github.com/petermattis/goid knows it for
// each release; a release that moves the field makes goid return wrong IDs
// silently (this happened at Go 1.23). So at start-up package rt, which
// reads the ID, checks goid's answer against the runtime.Stack parse, on
// this goroutine and on a fresh one; if they differ, every later call takes
// the slow path (microseconds: see BenchmarkGet) and a single warning is
// printed to stderr. Nothing else in locksmith reads goroutine identity.
//
// On amd64 and arm64 with the gc toolchain, Get is a few instructions of
// assembly (rt's goid_amd64.s, goid_arm64.s): the current g (from
// thread-local storage, or the g register), then the ID at an offset. The
// offset is not hard-coded: rt's initialisation finds the word of the g
// that holds goid's answer on two goroutines, and then checks the
// assembly itself against runtime.Stack as above. This saves a call per
// Get over goid's getg (called through our Get, which the inliner could
// not fold into Lock and Unlock). Elsewhere Get calls goid.Get; with the
// purego build tag it parses runtime.Stack.
//
// Get, Slow, Fast and Offset inline to calls of rt's functions.
//
// # C threads
//
// A goroutine's ID is not given out again, with one exception: the
// callbacks of a thread that C created into Go run on a goroutine that
// the runtime keeps with the thread's M (an "extra M") from one callback to
// the next, and gives, with its ID, to the callbacks of the next C thread
// once the thread exits. So a C thread's callbacks are one goroutine to the
// runtime, and so to our locks: a lock that one callback takes and leaves
// held is Owned in the next callback of the same thread, which may unlock
// it; and one that a thread's callback left held when the thread exited
// is, to the callbacks of a later C thread, theirs. Between callbacks, a
// dump of all goroutines lists the goroutine of a live C thread (in state
// syscall, locked to thread); once the thread has exited it lists nothing,
// and detection counts the lock's holder as exited (Dump says so, and a
// wait for the lock fails: see internal/core/exited.go).
// internal/testkit/cgotest checks this against the runtime.
package gid

import "github.com/locksmith-go/locksmith/internal/rt"

// Get returns the ID of the calling goroutine, as the runtime prints it in
// "goroutine N [running]". IDs are positive and never reused, except by
// the callbacks of C threads into Go (see the package doc).
func Get() int64 { return rt.Goid() }

// Slow returns the calling goroutine's ID by parsing runtime.Stack.
func Slow() int64 { return rt.SlowGoid() }

// Fast reports whether Get reads the ID directly, with this module's
// assembly or with goid (true), or parses runtime.Stack (false).
func Fast() bool { return rt.GoidFast() }

// Offset returns where the goroutine ID lives in the runtime's g, or 0
// while Get takes the slow path. It is fixed once package initialisation
// is done. Assembly fast paths elsewhere in locksmith read the ID at this
// offset with the GOID macro of internal/rt/goid_GOARCH.h.
func Offset() uintptr { return rt.GoidOffset() }
