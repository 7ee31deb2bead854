//go:build !gc || !(amd64 || arm64)

package gid

import (
	"io"

	"github.com/petermattis/goid"
)

// fast is whether goid.Get agrees with runtime.Stack. Written once, by
// setup.
var fast bool

// Get returns the ID of the calling goroutine, as the runtime prints it in
// "goroutine N [running]". IDs are positive and never reused.
func Get() int64 {
	if fast {
		return goid.Get()
	}
	return Slow()
}

// setup verifies goid.Get against runtime.Stack; if they differ it leaves
// Get on the slow path and writes one warning to w.
func setup(w io.Writer) bool {
	fast = verify(goid.Get, Slow, w)
	return fast
}

// Offset returns 0: this platform has no assembly fast path.
func Offset() uintptr { return 0 }
