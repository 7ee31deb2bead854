// Package gid is locksmith's only source of goroutine identity.
//
// It reads the current goroutine's ID with github.com/petermattis/goid
// (a few nanoseconds: a getg and a field load at a per-release offset).
// goid finds the field by offsets it knows for each Go release; a release
// that moves the field makes it return wrong IDs silently (this happened at
// Go 1.23). So at start-up, Get's fast answer is checked against the
// runtime.Stack parse, on this goroutine and on a fresh one; if they differ,
// every later call takes the slow path (about 1-5 us) and a single warning
// is printed to stderr. Nothing else in locksmith calls goid.
package gid

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"

	"github.com/petermattis/goid"
)

// fast reports whether goid.Get was found to agree with runtime.Stack.
// It is written once, during package initialisation, and only read after.
var fast = verify(goid.Get, Slow, os.Stderr)

// Get returns the ID of the calling goroutine, as the runtime prints it in
// "goroutine N [running]". IDs are positive and never reused.
func Get() int64 {
	if fast {
		return goid.Get()
	}
	return Slow()
}

// Fast reports whether Get uses goid's direct read (true) or the
// runtime.Stack fallback (false).
func Fast() bool { return fast }

// Slow returns the calling goroutine's ID by parsing runtime.Stack.
func Slow() int64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	id, ok := parse(buf[:n])
	if !ok {
		// The header of runtime.Stack has been "goroutine N [" since Go 1.0;
		// if that ever changes every lock would misbehave, so say so loudly.
		panic(fmt.Sprintf("locksmith/internal/gid: cannot parse goroutine header %q", buf[:n]))
	}
	return id
}

// parse reads N from a "goroutine N [...]" header.
func parse(b []byte) (int64, bool) {
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0, false
	}
	b = b[len(prefix):]
	end := 0
	for end < len(b) && b[end] >= '0' && b[end] <= '9' {
		end++
	}
	id, err := strconv.ParseInt(string(b[:end]), 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
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
