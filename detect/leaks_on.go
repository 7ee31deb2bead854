//go:build goexperiment.goroutineleakprofile

package detect

import (
	"io"
	"runtime/pprof"
)

// findLeaks runs the runtime's goroutine leak detection (a garbage
// collection that marks the goroutines blocked on what nothing running can
// reach), so that the next runtime.Stack prints "(leaked)" in their
// headers. Only in a build with GOEXPERIMENT=goroutineleakprofile, which
// has the leak profile; this file alone imports runtime/pprof.
func findLeaks() {
	if p := pprof.Lookup("goroutineleak"); p != nil {
		_ = p.WriteTo(io.Discard, 2) // debug 2: the detection, then the stacks, not a profile
	}
}

// leakProfile says whether findLeaks can tell a leaked goroutine.
const leakProfile = true
