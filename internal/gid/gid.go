// Package gid is locksmith's only source of goroutine identity.
//
// The goroutine ID is a field of the runtime's g. Where that field lives
// changes between Go releases, and github.com/petermattis/goid knows it for
// each release; a release that moves the field makes goid return wrong IDs
// silently (this happened at Go 1.23). So at start-up this package checks
// goid's answer against the runtime.Stack parse, on this goroutine and on a
// fresh one; if they differ, every later call takes the slow path (about
// 1-5 us) and a single warning is printed to stderr. Nothing else in
// locksmith reads goroutine identity.
//
// On amd64 and arm64 with the gc toolchain, Get is a few instructions of
// assembly (get_amd64.s, get_arm64.s): the current g (from thread-local
// storage, or the g register), then the ID at an offset. The offset is not
// hard-coded: init finds the word of the g that holds goid's answer on two
// goroutines, and then checks Get itself against runtime.Stack as above. This saves a call per Get over goid's
// getg (called through our Get, which the inliner could not fold into
// Lock and Unlock), which is about a quarter of the cost of a Monitor
// re-entry. Elsewhere Get calls goid.Get.
package gid

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/locksmith-go/locksmith/internal/rt"
)

// verified reports whether Get's fast path was found to agree with
// runtime.Stack. It is written once, during package initialisation.
var verified = setup(os.Stderr)

// Fast reports whether Get uses goid's direct read (true) or the
// runtime.Stack fallback (false).
func Fast() bool { return verified }

// Slow returns the calling goroutine's ID by parsing runtime.Stack.
func Slow() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	id, ok := rt.GoroutineID(buf[:n])
	if !ok {
		// The header of runtime.Stack has been "goroutine N [" since Go 1.0;
		// if that ever changes every lock would misbehave, so say so loudly.
		panic(fmt.Sprintf("locksmith/internal/gid: cannot parse goroutine header %q", buf[:n]))
	}
	return id
}

// verify compares fastGet with slowGet on the calling goroutine and on a new
// one. It returns true when they agree; otherwise it writes one warning to
// w and returns false.
func verify(fastGet, slowGet func() int64, w io.Writer) bool {
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
