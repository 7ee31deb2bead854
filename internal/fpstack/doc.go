// Package fpstack captures call stacks by following frame pointers, for
// the detector's acquisition and wait sites.
//
// runtime.Callers unwinds through the runtime's tables, frame by frame,
// expanding inlined calls as it goes: about a microsecond for a test's
// stack of a dozen frames. On amd64 and arm64 the gc toolchain keeps a
// frame pointer in every Go frame, so the return PCs are one load per
// frame away (Callers, in assembly). What the tables add, the inlined
// calls and the wrappers that runtime.Callers leaves out, is worked out
// by Frames when a report needs the frames, not when the stack is taken.
//
// The PCs that Callers returns are physical: one per frame on the stack,
// where runtime.Callers returns one per call, inlined or not. So skip
// counts physical frames, and a caller that skips frames must keep them
// out of line (//go:noinline), or it would skip its caller's frames too.
// Frames expands them as runtime.CallersFrames expands runtime.Callers'
// PCs.
//
// Other architectures, other compilers and the purego build tag use
// runtime.Callers; FramePointers says which is in use.
package fpstack
