//go:build gc && !purego && (amd64 || arm64)

package fpstack

// FramePointers reports whether Record follows frame pointers (true) or
// calls runtime.Callers.
const FramePointers = true

// Record records the calling goroutine's stack in rec, for Frames, and
// returns how many words it wrote: none if rec is empty, else at most
// len(rec). rec[0] holds skip, the number of calls (inlined or not) that
// Frames leaves out, counted from the caller of Record: what Record(s)
// records, Frames returns as runtime.Callers(s+1) returns it. The rest of
// rec holds the return PCs, one per physical frame, from the caller of
// Record up. Frames leaves out the wrappers that runtime.Callers leaves
// out, but they take a word here: a buffer of 1+s+n words holds at least
// n frames after the s left out if the stack has no wrapper frames (a
// goroutine started with arguments has one at the bottom, a method called
// through a pointer wrapper one more).
//
// Implemented in walk_$GOARCH.s.
//
//go:noescape
func Record(skip int, rec []uintptr) int
