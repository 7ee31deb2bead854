//go:build !gc || purego || !(amd64 || arm64) || !go1.23

package fpstack

import "runtime"

// Record records the calling goroutine's stack in rec, for Frames, and
// returns how many words it wrote: none if rec is empty, else at most
// len(rec). rec[0] holds skip (and a bit that tells Frames whose PCs
// follow), the number of calls that Frames leaves
// out, counted from the caller of Record: what Record(s) records, Frames
// returns as runtime.Callers(s+1) returns it. The rest of rec is what
// runtime.Callers returns from the caller of Record up: a buffer of 1+s+n
// words holds n frames after the s left out.
func Record(skip int, rec []uintptr) int {
	if len(rec) == 0 {
		return 0
	}
	rec[0] = uintptr(skip) | logical
	return 1 + runtime.Callers(2, rec[1:])
}

// CheapCaller says whether CallerPC costs a walk of frame pointers (true)
// rather than a call of runtime.Callers.
const CheapCaller = false

// CallerPC returns the return PC of its caller's frame, or of the frame
// skip frames above that: where the function that calls CallerPC returns
// to, one PC and no stack. That caller must not be inlined. It returns 0
// if there is no such frame.
//
//go:noinline
func CallerPC(skip int) uintptr {
	// 0 is runtime.Callers, 1 CallerPC, 2 its caller, 3 the caller's.
	var pc [1]uintptr
	if runtime.Callers(3+skip, pc[:]) < 1 {
		return 0
	}
	return pc[0]
}
