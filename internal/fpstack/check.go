//go:build gc && !purego && (amd64 || arm64) && go1.23

package fpstack

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
)

// walkOK is whether Record walks frame pointers (true) or hands every
// stack to runtime.Callers (false): the walk's assembly tests it first.
// Written once, by init.
var walkOK bool

func init() {
	walkOK = true
	walkOK = verifyWalk(walkSample, os.Stderr)
}

// verifyWalk compares the two stacks that sample takes (Record's,
// symbolised by Frames, and runtime.Callers') on the calling goroutine
// and on a new one, as gid checks its
// goroutine IDs against runtime.Stack: a release that moved the g's stack
// bounds or changed the frame layout would make them differ. It returns
// true when they agree; otherwise it writes one warning to w and returns
// false.
func verifyWalk(sample func(n int) (got, want []string), w io.Writer) bool {
	here, hereWant := sample(3)
	var there, thereWant []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		there, thereWant = sample(3)
	}()
	wg.Wait()
	if len(here) > 0 && slices.Equal(here, hereWant) && slices.Equal(there, thereWant) {
		return true
	}
	fmt.Fprintf(w, "locksmith: the frame-pointer walk of internal/fpstack disagrees with "+
		"runtime.Callers on %s; recording stacks with runtime.Callers (correct, but slower).\n",
		runtime.Version())
	return false
}

// walkSample records the stack n noinline calls below it both ways and
// returns the frames of each, as "function file:line".
//
//go:noinline
func walkSample(n int) (got, want []string) {
	if n > 0 {
		return walkSample(n - 1)
	}
	var rec [1 + 64]uintptr
	var pcs [64]uintptr
	k, m := Record(0, rec[:]), runtime.Callers(1, pcs[:])
	for _, f := range Frames(rec[:k], len(pcs)) {
		got = append(got, fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line))
	}
	for _, f := range expand(pcs[:m]) {
		want = append(want, fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line))
	}
	return got, want
}
