//go:build gc && (amd64 || arm64) && !purego

package rt

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"github.com/petermattis/goid"
)

// Goid returns the ID of the calling goroutine, as the runtime prints it in
// "goroutine N [running]". IDs are positive and never reused, except
// by the callbacks of C threads into Go (see package gid).
//
// Implemented in get_$GOARCH.s.
func Goid() int64

// getg returns the current goroutine's g. Implemented in get_$GOARCH.s.
func getg() unsafe.Pointer

// GoidOffset returns where the goroutine ID lives in the runtime's g, or 0
// while Goid takes the slow path. It is fixed once package initialisation
// is done. Assembly fast paths elsewhere in locksmith read the ID at this
// offset with the GOID macro of goid_GOARCH.h, so that the way to read it
// stays in this package.
func GoidOffset() uintptr { return goidOffset }

// goidOffset is where the goroutine ID lives in the runtime's g, or 0 while
// Goid must take the slow path. Written once, by setup.
var goidOffset uintptr

// maxOffset bounds the search for the ID field: well inside the g (over
// 400 bytes in every release since Go 1.20), past where it has ever been
// (0x98 in Go 1.23 to 1.26).
const maxOffset = 256

// setupGoid finds the ID field with goid's help and verifies Goid against
// runtime.Stack; on any failure it leaves Goid on the slow path and writes
// one warning to w.
func setupGoid(w io.Writer) bool {
	off := locate(goid.Get)
	if off == 0 {
		fmt.Fprintf(w, "locksmith: cannot find the goroutine ID that github.com/petermattis/goid "+
			"reads (%d) in the runtime's g on %s; using the slow runtime.Stack path "+
			"(correct, but microseconds per lock operation). Update goid.\n",
			goid.Get(), runtime.Version())
		return false
	}
	goidOffset = off
	if !verifyGoid(Goid, SlowGoid, w) {
		goidOffset = 0
		return false
	}
	return true
}

// locate returns the offset of the word of g that holds id's answer on this
// goroutine and on a fresh one (so not a coincidence), or 0.
func locate(id func() int64) uintptr {
	here := scan(id)
	var there []uintptr
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		there = scan(id)
	}()
	wg.Wait()
	for _, off := range here {
		if slices.Contains(there, off) {
			return off
		}
	}
	return 0
}

// scan returns the offsets in the calling goroutine's g of the words equal
// to id's answer.
func scan(id func() int64) []uintptr {
	g, want := getg(), id()
	var offs []uintptr
	for off := uintptr(8); off < maxOffset; off += 8 {
		if *(*int64)(unsafe.Add(g, off)) == want {
			offs = append(offs, off)
		}
	}
	return offs
}
