//go:build gc && !purego && (amd64 || arm64) && go1.23

package fpstack

import "runtime"

// Record records the calling goroutine's stack in rec, for Frames, and
// returns how many words it wrote: none if rec is empty, else at most
// len(rec). rec[0] holds skip (and a bit that tells Frames whose PCs
// follow), the number of calls (inlined or not) that
// Frames leaves out, counted from the caller of Record: what Record(s)
// records, Frames returns as runtime.Callers(s+1) returns it. The rest of
// rec holds the return PCs, one per physical frame, from the caller of
// Record up. Frames leaves out the wrappers that runtime.Callers leaves
// out, but they take a word here: a buffer of 1+s+n words holds at least
// n frames after the s left out if the stack has no wrapper frames (a
// goroutine started with arguments has one at the bottom, a method called
// through a pointer wrapper one more).
//
// A walk that meets a frame pointer that cannot be one (outside the
// goroutine's stack, not above the previous one, or misaligned) ends in
// recordCallers instead, which records what runtime.Callers returns. In a
// goroutine called back from C, the frame pointer that the callback's
// entry saved is the system stack's, so stacks taken there cost what
// runtime.Callers costs, and list the Go frames that called C too.
//
// Implemented in walk_$GOARCH.s.
//
//go:noescape
func Record(skip int, rec []uintptr) int

// recordCallers is Record by runtime.Callers. Record tail-calls it, so its
// caller is Record's, and its frames below runtime.Callers are its own
// and the ABI wrapper's (left out by runtime.Callers, as wrappers are).
//
//lint:ignore U1000 walk_amd64.s and walk_arm64.s jump here; Go code never calls it
func recordCallers(skip int, rec []uintptr) int {
	rec[0] = uintptr(skip) | logical
	return 1 + runtime.Callers(2, rec[1:])
}

// CheapCaller says whether CallerPC costs a walk of frame pointers (true)
// rather than a call of runtime.Callers.
const CheapCaller = true

// CallerPC returns the return PC of its caller's frame, or of the frame
// skip physical frames above that: where the function that calls
// CallerPC returns to, one PC and no stack. skip is at most 2 (an ABI
// wrapper between an assembly caller and the Go function that calls
// CallerPC is one frame). That caller must not be inlined. It returns 0
// if the walk found no such frame.
//
//go:noinline
func CallerPC(skip int) uintptr {
	// rec[1] is Record's return PC (in CallerPC), rec[2] CallerPC's (in
	// its caller), rec[3] the caller's own.
	var rec [6]uintptr
	n := 4 + skip
	if skip < 0 || n > len(rec) || Record(0, rec[:n]) < n {
		return 0
	}
	return rec[n-1]
}
