package condvar

import (
	"unsafe"
)

// notifyList is the runtime's ticket list behind sync.Cond: the same
// layout as runtime.notifyList and sync.notifyList (which sync keeps by
// hand too, and checks at start-up as init does below). A Cond parks its
// untimed waits outside bubbles on one (see Cond.mu), so that such a wait
// costs what sync.Cond's does plus the checks: one ticket, one park, no
// record and no lock of the Cond's own. With every wait queued on a record
// that parked on its own sync.Cond, BenchmarkCondPingPongRatio measured
// 1.53-1.69 times sync.Cond's CPU time on a sync.Mutex and 1.56-1.78 on
// mutex.Mutex and monitor.Monitor; with the ticket list (and Wait written
// out, see there), 1.08-1.17 and 1.17-1.29 (6 runs each, the two builds
// alternating, 2-core AMD EPYC, Go 1.26).
//
// The functions below are the runtime's, which it pushes to package sync
// by //go:linkname; the linker (since Go 1.23) lets any package pull a
// symbol its defining package pushes. The risk is a Go release that
// changes the list's layout (init then stops the program at start-up
// with "bad notifyList size", as it would sync) or stops pushing the
// functions (the build then fails to link). Either would need this file
// and the Cond's ticket path replaced by the per-waiter queue, which
// every other wait already uses.
type notifyList struct {
	wait   uint32 // atomic: the runtime adds to it without a lock
	notify uint32
	lock   uintptr
	head   unsafe.Pointer
	tail   unsafe.Pointer
}

//go:linkname runtime_notifyListAdd sync.runtime_notifyListAdd
func runtime_notifyListAdd(l *notifyList) uint32

//go:linkname runtime_notifyListWait sync.runtime_notifyListWait
func runtime_notifyListWait(l *notifyList, t uint32)

//go:linkname runtime_notifyListNotifyAll sync.runtime_notifyListNotifyAll
func runtime_notifyListNotifyAll(l *notifyList)

//go:linkname runtime_notifyListNotifyOne sync.runtime_notifyListNotifyOne
func runtime_notifyListNotifyOne(l *notifyList)

//go:linkname runtime_notifyListCheck sync.runtime_notifyListCheck
func runtime_notifyListCheck(size uintptr)

func init() {
	runtime_notifyListCheck(unsafe.Sizeof(notifyList{}))
}

// less reports whether ticket a comes before ticket b, for counters that
// wrap around (the runtime's rule: their difference stays below 2^31).
func less(a, b uint32) bool { return int32(a-b) < 0 }
