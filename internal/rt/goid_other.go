//go:build !purego && (!gc || !(amd64 || arm64))

package rt

import (
	"io"

	"github.com/petermattis/goid"
)

// fast is whether goid.Get agrees with runtime.Stack. Written once, by
// setup.
var fast bool

// Goid returns the ID of the calling goroutine, as the runtime prints it in
// "goroutine N [running]". IDs are positive and never reused, except
// by the callbacks of C threads into Go (see package gid).
func Goid() int64 {
	if fast {
		return goid.Get()
	}
	return SlowGoid()
}

// setupGoid verifies goid.Get against runtime.Stack; if they differ it leaves
// Goid on the slow path and writes one warning to w.
func setupGoid(w io.Writer) bool {
	fast = verifyGoid(goid.Get, SlowGoid, w)
	return fast
}

// GoidOffset returns 0: this platform has no assembly fast path.
func GoidOffset() uintptr { return 0 }
