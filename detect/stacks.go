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
	for gs := rt.Goroutines(buf); gs.Next(); {
		h, stack := gs.Header, gs.Stack
		if !want[h.ID] {
			continue
		}
		all, _ := stack.Frames()
		frames := []Frame{} // non-nil: the goroutine was found (alive), even if every frame is trimmed
		for _, f := range all {
			if !isTrimmed(f.Function) {
				frames = append(frames, Frame{Function: f.Function, File: f.File, Line: f.Line})
			}
		}
		out[h.ID] = frames
	}
	return out
}
