package detect

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// Frames of these packages are the detector's and the locks' own, not the
// user's, and are trimmed from reports, as are the runtime's.
var trimmed = []string{
	"runtime.",
	"github.com/locksmith-go/locksmith/internal/",
	"github.com/locksmith-go/locksmith/detect.",
	"github.com/locksmith-go/locksmith/mutex.",
	"github.com/locksmith-go/locksmith/monitor.",
	"github.com/locksmith-go/locksmith/condvar.",
	"github.com/locksmith-go/locksmith/deadlock.",
}

func isTrimmed(fn string) bool {
	for _, p := range trimmed {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// site returns "file:line" of the first user frame of rec, an fpstack
// record, or "".
func site(rec []uintptr) string {
	for _, f := range fpstack.Frames(rec, stackDepth) {
		if !isTrimmed(f.Function) {
			return f.File + ":" + strconv.Itoa(f.Line)
		}
	}
	return ""
}

// symbolise returns the user frames of rec, an fpstack record.
func symbolise(rec []uintptr) []Frame {
	var out []Frame
	for _, f := range fpstack.Frames(rec, stackDepth) {
		if !isTrimmed(f.Function) {
			out = append(out, Frame{Function: f.Function, File: f.File, Line: f.Line})
		}
	}
	return out
}

// goroutineStacks returns the trimmed current stacks of the goroutines in
// want, from one runtime.Stack(all) snapshot.
func goroutineStacks(want map[int64]bool) map[int64][]Frame {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		if len(buf) >= 64<<20 {
			break // take what fits
		}
		buf = make([]byte, 2*len(buf))
	}
	return parseStacks(buf, want)
}

// parseStacks returns the trimmed frames of the goroutines in want that
// buf, a runtime.Stack(all) text, holds (see rt.Goroutines).
func parseStacks(buf []byte, want map[int64]bool) map[int64][]Frame {
	out := map[int64][]Frame{}
	for h, stack := range rt.Goroutines(buf) {
		if !want[h.ID] {
			continue
		}
		all, _ := stack.Frames()
		frames := []Frame{} // non-nil: the goroutine was found (alive), even if every frame is trimmed
		for _, f := range all[libraryCalls(all):] {
			if !isTrimmed(f.Function) {
				frames = append(frames, Frame{Function: f.Function, File: f.File, Line: f.Line})
			}
		}
		out[h.ID] = frames
	}
	return out
}

// libraryCalls returns how many of the innermost frames of fs are the
// library's own work: a run of frames of the locks and of standard
// packages that ends with the outermost lock frame of the run. A waiter
// that is arming its timer shows time.NewTimer called from the locks;
// that frame is the library's doing, not the user's, and must not become
// the first user frame of a report (or the key of its problem). Without a
// lock frame in the run (a goroutine blocked in sync.WaitGroup.Wait, say)
// nothing is cut.
func libraryCalls(fs []rt.Frame) int {
	n := 0
	for i, f := range fs {
		switch {
		case isTrimmed(f.Function) && !strings.HasPrefix(f.Function, "runtime."):
			n = i + 1
		case isTrimmed(f.Function) || isStd(f.Function):
		default:
			return n
		}
	}
	return n
}

// isStd reports whether fn is a function of the standard library: its
// import path's first element has no dot. (A user's package main looks
// so too; it is only ever cut where the locks called it, which they do
// not.)
func isStd(fn string) bool {
	if i := strings.IndexByte(fn, '/'); i >= 0 {
		return !strings.Contains(fn[:i], ".")
	}
	pkg, _, _ := strings.Cut(fn, ".")
	return pkg != "main"
}

// gInfo is what a snapshot of all goroutines says about one.
type gInfo struct {
	state     string  // as the header prints it: "chan send", "running"
	createdBy int64   // the goroutine that started it, or 0
	frames    []Frame // the trimmed frames, as parseStacks gives them
	test      string  // the test function it runs, if it is a test's goroutine
}

// allGoroutines takes a snapshot of every goroutine: its state, its
// creator and its trimmed frames.
func allGoroutines() map[int64]gInfo {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		if len(buf) >= 64<<20 {
			break // take what fits
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[int64]gInfo{}
	for h, stack := range rt.Goroutines(buf) {
		all, created := stack.Frames()
		gi := gInfo{state: h.State, createdBy: created.By, frames: []Frame{}}
		for _, f := range all[libraryCalls(all):] {
			if !isTrimmed(f.Function) {
				gi.frames = append(gi.frames, Frame{Function: f.Function, File: f.File, Line: f.Line})
			}
		}
		// A test's goroutine runs testing.tRunner, which calls the test
		// function: the frame just inside it.
		for i, f := range all {
			if f.Function == "testing.tRunner" && i > 0 {
				gi.test = all[i-1].Function
				break
			}
		}
		out[h.ID] = gi
	}
	return out
}
