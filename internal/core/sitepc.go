package core

import "github.com/locksmith-go/locksmith/internal/fpstack"

// SitePC returns pc(skip), the PC a lock's fast path keeps as where its
// holder (or a reader) took it (Lock.SetHolderPC, RWLock.SetReaderPC),
// where CallerPC is a walk of frame pointers (fpstack.CheapCaller), or,
// where it is runtime.Callers (the purego build, Go before 1.23), in
// Order mode only, whose reports name where every held lock was taken:
// runtime.Callers costs an uncontended lock call more than the call
// itself, which only Order mode's bookkeeping, dearer still, makes
// small. Otherwise it returns 0: not recorded. pc must be
// fpstack.CallerPC, passed as a value so that, with SitePC inlined into
// its caller, CallerPC is called from that caller.
func SitePC(pc func(int) uintptr, skip int) uintptr {
	if fpstack.CheapCaller {
		return pc(skip)
	}
	if OrderWord() >= ModeOrder {
		// runtime.Callers counts inlined calls as frames: SitePC's too.
		return pc(skip + 1)
	}
	return 0
}
