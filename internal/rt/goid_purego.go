//go:build purego

package rt

import "io"

// Goid returns the ID of the calling goroutine, as the runtime prints it
// in "goroutine N [running]". IDs are positive and never reused, except
// by the callbacks of C threads into Go (see package gid). With the purego
// tag it parses runtime.Stack: no read of the runtime's g.
func Goid() int64 { return SlowGoid() }

// setupGoid has nothing to check: Goid is the slow path.
func setupGoid(io.Writer) bool { return false }

// GoidOffset returns 0: no assembly reads the ID with the purego tag.
func GoidOffset() uintptr { return 0 }
