package detect

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"

	"github.com/locksmith-go/locksmith/internal/fpstack"
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

// parseStacks parses runtime.Stack(all) output:
//
//	goroutine 7 [sync.Mutex.Lock]:
//	pkg.fn(0x1, ...)
//		/path/file.go:12 +0x45
func parseStacks(buf []byte, want map[int64]bool) map[int64][]Frame {
	out := map[int64][]Frame{}
	for _, block := range bytes.Split(buf, []byte("\n\n")) {
		lines := strings.Split(strings.TrimSpace(string(block)), "\n")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "goroutine ") {
			continue
		}
		head := strings.TrimPrefix(lines[0], "goroutine ")
		sp := strings.IndexByte(head, ' ')
		if sp < 0 {
			continue
		}
		id, err := strconv.ParseInt(head[:sp], 10, 64)
		if err != nil || !want[id] {
			continue
		}
		frames := []Frame{} // non-nil: the goroutine was found (alive), even if every frame is trimmed
		for i := 1; i+1 < len(lines); i += 2 {
			fn := lines[i]
			if strings.HasPrefix(fn, "created by ") {
				break
			}
			if p := strings.LastIndexByte(fn, '('); p > 0 {
				fn = fn[:p]
			}
			loc := strings.TrimSpace(lines[i+1])
			if p := strings.LastIndex(loc, " +0x"); p > 0 {
				loc = loc[:p]
			}
			file, line := loc, 0
			if p := strings.LastIndexByte(loc, ':'); p > 0 {
				file = loc[:p]
				line, _ = strconv.Atoi(loc[p+1:])
			}
			if !isTrimmed(fn) {
				frames = append(frames, Frame{Function: fn, File: file, Line: line})
			}
		}
		out[id] = frames
	}
	return out
}
