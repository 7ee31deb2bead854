// Package fpstack records call stacks by following frame pointers, for
// the detector's first-lock sites, edges and wait sites.
//
// runtime.Callers unwinds through the runtime's tables, frame by frame,
// and expands the inlined calls of each frame as it goes: about a
// microsecond for a test's stack of a dozen frames. With the gc toolchain
// on amd64 and arm64 every Go frame keeps a frame pointer, so the return
// PCs are one load per frame away; Record reads them in assembly. What the
// tables add (the inlined calls, the wrappers that runtime.Callers leaves
// out, the skip counted in calls) is worked out by Frames, when a report
// needs the frames, rather than when the stack is taken.
//
// The walk is bounded by the record's length and by the goroutine's own
// stack: it follows a frame pointer only if it lies within the stack's
// bounds, above the previous one, and aligned, so it never reads memory
// that is not the goroutine's. A chain ends with a zero; a frame pointer
// that cannot be one (the system stack's, saved where a cgo callback
// entered Go; a garbage word) hands the stack over to runtime.Callers,
// whose unwinder knows how to go on.
//
// Rejected alternatives. The runtime's own expander of frame-pointer
// stacks (runtime.pprof_fpunwindExpand, which knows the wrappers by the
// flag the runtime does not export) is reachable only by a linkname that
// the runtime grants runtime/pprof: a Go release that drops it would stop
// programs that import locksmith from linking. Reading that flag from the
// runtime's function table through unsafe would tie the symbolising to
// the table's layout. Frames tells the wrappers by their names instead,
// which the tests check against runtime.Callers for each kind.
//
// At start-up the walk is checked against runtime.Callers, as gid checks
// its goroutine IDs (check.go): if they disagree, Record hands every
// stack to runtime.Callers and one warning goes to stderr. The loads of
// the g's stack bounds come from internal/rt's GSTACK macro. Other
// architectures, other compilers, the purego build tag and Go releases
// before go1.23 use runtime.Callers (on go1.22 the start-up check finds
// the walk's stacks missing inlined calls, and so does the hand-over to
// runtime.Callers from the walk's assembly).
package fpstack
