package detect

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/misuse"
)

// Contract panics swallowed by the standard library (core.Contract): a
// recursive Lock or RLock, or a read-to-write upgrade, raised inside a
// String, Error, Format or GoString method that fmt calls, or a function
// or method a text/template calls. With package sync the call would hang,
// a bug for all to see; ours panics, and fmt would print the panic into
// its output ("%!v(PANIC=String method: ...)") and carry on, text/template
// turn it into an error, and the bug would pass unnoticed. So such a
// panic is also delivered as a RecoveredMisuse report, before it is
// raised: VerifyNone fails the test that made it, and the default
// reporter prints it. It is delivered in Cycles and Order modes, once per
// problem (call site); only the panic path pays, reading its goroutine's
// stack. The panic goes on as before.

func init() { core.SetRecoveredHook(recoveredMisuse) }

func recoveredMisuse(e *misuse.Error, by string, pcs []uintptr) {
	if CurrentMode() == Off {
		return
	}
	var stack []Frame
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if !isTrimmed(f.Function) {
			stack = append(stack, Frame{Function: f.Function, File: f.File, Line: f.Line})
		}
		if !more {
			break
		}
	}
	r := &Report{Kind: RecoveredMisuse, Mode: CurrentMode(), Misuse: e, RecoveredBy: by,
		Steps: []Step{{Goroutine: e.Goroutine, Stack: stack}}}
	if note(r, nil, []int64{e.Goroutine}) {
		deliver(r)
	}
}

// recoveredString formats a RecoveredMisuse report.
func (r *Report) recoveredString(b *strings.Builder) {
	w := r.Steps[0]
	what, does := "fmt", `prints the panic into its output ("%!v(PANIC=String method: ...)") and carries on`
	if strings.HasPrefix(r.RecoveredBy, "text/template.") {
		what, does = "text/template", "turns the panic into the template's error"
	}
	header(b, fmt.Sprintf("locksmith: a lock's contract panic in goroutine %d is recovered by %s", w.Goroutine, what))
	msg := "a broken lock contract"
	if r.Misuse != nil {
		msg = r.Misuse.Error()
	}
	fmt.Fprintf(b, "%s\n", msg)
	fmt.Fprintf(b, "was raised inside a call that %s makes under a recover: %s %s,\n", r.RecoveredBy, what, does)
	b.WriteString("so the bug would pass unseen (with package sync the call would hang)\n\n")
	stack(b, w)
	r.seenLine(b)
}
