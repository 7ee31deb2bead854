package core

import (
	"runtime"
	"sync/atomic"
)

// Contract panics that the standard library would swallow. fmt calls a
// value's String, Error, Format and GoString methods under a deferred
// recover (fmt.(*pp).catchPanic, deferred in fmt.(*pp).handleMethods) and
// prints a panic's value into its output as "%!v(PANIC=String method:
// ...)"; text/template calls the functions and methods a template names
// under a recover (text/template.safeCall) that turns the panic into
// Execute's error. A recursive Lock in a String method, which with
// sync.Mutex hangs for all to see, would with our locks be a panic
// nobody sees. So the lock-contract panics that stand for a hang with
// package sync (a recursive Lock or RLock, a read-to-write upgrade) go
// through Contract, which, on a goroutine whose stack shows such a call,
// first hands the panic to package detect to deliver as a finding.
// Only the panic path pays: the stack is read once the contract is
// already broken.

// recoverers are the functions whose calls recover the panics of what
// they call, as runtime.Frame names them.
var recoverers = []string{
	"fmt.(*pp).handleMethods",
	"text/template.safeCall",
}

// recoveredHook is what package detect installs (SetRecoveredHook).
var recoveredHook atomic.Pointer[func(e *Error, by string, pcs []uintptr)]

// SetRecoveredHook makes f receive every contract panic Contract finds
// that a recoverer will swallow: the panic value, the recoverer's name
// and the stack of the call (runtime.Callers PCs, innermost first,
// starting at Contract's caller).
func SetRecoveredHook(f func(e *Error, by string, pcs []uintptr)) { recoveredHook.Store(&f) }

// Contract returns e, a contract panic's value about to be raised, after
// handing it to the hook if a recoverer's frame is on the calling
// goroutine's stack.
func Contract(e *Error) *Error {
	h := recoveredHook.Load()
	if h == nil {
		return e
	}
	pcs := make([]uintptr, 256)
	pcs = pcs[:runtime.Callers(2, pcs)]
	if by := recoveredBy(pcs); by != "" {
		(*h)(e, by, pcs)
	}
	return e
}

// recoveredBy returns the innermost recoverer among pcs' frames, or "".
func recoveredBy(pcs []uintptr) string {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		for _, r := range recoverers {
			if f.Function == r {
				return r
			}
		}
		if !more {
			return ""
		}
	}
}
