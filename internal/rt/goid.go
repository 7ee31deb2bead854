package rt

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// goidVerified reports whether Goid's fast path was found to agree with
// runtime.Stack. It is written once, during package initialisation.
var goidVerified = setupGoid(os.Stderr)

// GoidFast reports whether Goid reads the ID directly (true) or parses
// runtime.Stack (false).
func GoidFast() bool { return goidVerified }

// SlowGoid returns the calling goroutine's ID by parsing runtime.Stack.
// It allocates nothing once warm: runtime.Stack keeps its buffer, which
// would otherwise escape to the heap on every call, so the buffers come
// from a pool, whose synchronization the race detector does not see (a
// buffer's users would be ordered): the buffer is written only by the
// runtime, which the detector does not check, and read here.
func SlowGoid() int64 {
	raceHide()
	buf := stackBufs.Get().(*[64]byte)
	n := runtime.Stack(buf[:], false)
	id, ok := GoroutineID(buf[:n])
	if !ok {
		raceShow()
		// The header of runtime.Stack has been "goroutine N [" since Go 1.0;
		// if that ever changes every lock would misbehave, so say so loudly.
		panic(fmt.Sprintf("locksmith/internal/rt: cannot parse goroutine header %q", buf[:n]))
	}
	stackBufs.Put(buf)
	raceShow()
	return id
}

var stackBufs = sync.Pool{New: func() any { return new([64]byte) }}

// verifyGoid compares fastGet with slowGet on the calling goroutine and on
// a new one. It returns true when they agree; otherwise it writes one
// warning to w and returns false.
func verifyGoid(fastGet, slowGet func() int64, w io.Writer) bool {
	type pair struct{ fast, slow int64 }
	var here, there pair
	here = pair{fastGet(), slowGet()}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		there = pair{fastGet(), slowGet()}
	}()
	wg.Wait()
	if here.fast == here.slow && there.fast == there.slow && here.fast != there.fast {
		return true
	}
	fmt.Fprintf(w, "locksmith: goroutine IDs from github.com/petermattis/goid (%d, %d) "+
		"differ from runtime.Stack (%d, %d) on %s; using the slow runtime.Stack path "+
		"(correct, but microseconds per lock operation). Update goid.\n",
		here.fast, there.fast, here.slow, there.slow, runtime.Version())
	return false
}
