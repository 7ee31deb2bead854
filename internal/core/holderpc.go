package core

import (
	"runtime"
	"strconv"
	"strings"
)

// libraryFrames are the prefixes of the functions that are the
// detector's and the locks' own, not the user's, and are trimmed from
// reports and panic messages, as are the runtime's.
var libraryFrames = []string{
	"runtime.",
	"github.com/locksmith-go/locksmith/internal/",
	"github.com/locksmith-go/locksmith/detect.",
	"github.com/locksmith-go/locksmith/mutex.",
	"github.com/locksmith-go/locksmith/monitor.",
	"github.com/locksmith-go/locksmith/condvar.",
	"github.com/locksmith-go/locksmith/deadlock.",
}

// IsLibraryFrame reports whether fn, a function's name as runtime.Frame
// gives it, is the runtime's or locksmith's own rather than the user's.
func IsLibraryFrame(fn string) bool {
	for _, p := range libraryFrames {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// PCFrame returns the innermost user frame at pc, a return PC as
// SetHolderPC records it (the calls inlined there expanded, library
// frames left out), and whether there is one.
func PCFrame(pc uintptr) (runtime.Frame, bool) {
	if pc == 0 {
		return runtime.Frame{}, false
	}
	// The 0 after pc makes the runtime expand the calls inlined at pc,
	// which it does only for a PC that is not the last of its list; it
	// stands for no frame.
	fs := runtime.CallersFrames([]uintptr{pc, 0})
	for {
		f, more := fs.Next()
		if f.Function != "" && !IsLibraryFrame(f.Function) {
			return f, true
		}
		if !more {
			return runtime.Frame{}, false
		}
	}
}

// PCSite returns "file:line" of PCFrame(pc), or "" if there is none.
func PCSite(pc uintptr) string {
	f, ok := PCFrame(pc)
	if !ok {
		return ""
	}
	return f.File + ":" + strconv.Itoa(f.Line)
}

// Sites returns the clause of a recursive-locking panic that says where
// the holder took the lock (held, as HolderPC returns it) and where it
// asked for it again (again, its own return PC): ": locked at f:1,
// locked again at f:2", with "not recorded" for a site not known.
func Sites(held, again uintptr) string {
	name := func(pc uintptr) string {
		if s := PCSite(pc); s != "" {
			return s
		}
		return "not recorded"
	}
	return ": locked at " + name(held) + ", locked again at " + name(again)
}
