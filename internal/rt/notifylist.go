//go:build !purego

package rt

// Re-check on a new Go release: the runtime's notify list behind
// sync.Cond, which condvar parks its untimed waits on. None of it is
// documented API; all of it lives in this file.
//   - the layout of runtime.notifyList (runtime/sema.go) and
//     sync.notifyList (sync/runtime.go) is still NotifyList's: init below
//     stops the program at start-up with "bad notifyList size" otherwise,
//     but a reordering of equal-sized fields would go unnoticed.
//   - the runtime still pushes notifyListAdd, notifyListWait,
//     notifyListNotifyAll, notifyListNotifyOne and notifyListCheck to
//     package sync by //go:linkname, under the names declared below (the
//     build fails to link otherwise), with the same signatures.
//   - wait and notify are still the ticket counters: the next ticket to
//     take, and the next to notify, both wrapping around.
//
// Built with -tags purego, the package declares no linkname, and condvar
// queues every wait instead (see notifylist_purego.go).

import (
	"unsafe"
)

// NotifyList is the runtime's ticket list behind sync.Cond: the same
// layout as runtime.notifyList and sync.notifyList (which sync keeps by
// hand too, and checks at start-up as init does below).
//
// The functions below are the runtime's, which it pushes to package sync
// by //go:linkname; the linker (since Go 1.23) lets any package pull a
// symbol its defining package pushes. The risk is a Go release that
// changes the list's layout (init then stops the program at start-up
// with "bad notifyList size", as it would sync) or stops pushing the
// functions (the build then fails to link). Either would need this file
// and condvar's ticket path replaced by condvar's per-waiter queue, which
// every other wait already uses (as it does built with -tags purego).
type NotifyList struct {
	Wait   uint32 // atomic: the runtime adds to it without a lock
	Notify uint32
	//lint:ignore U1000 the runtime's notifyList layout: only the runtime reads it
	lock uintptr
	//lint:ignore U1000 the runtime's notifyList layout: only the runtime reads it
	head unsafe.Pointer
	//lint:ignore U1000 the runtime's notifyList layout: only the runtime reads it
	tail unsafe.Pointer
}

//go:linkname NotifyListAdd sync.runtime_notifyListAdd
func NotifyListAdd(l *NotifyList) uint32

//go:linkname NotifyListWait sync.runtime_notifyListWait
func NotifyListWait(l *NotifyList, t uint32)

//go:linkname NotifyListNotifyAll sync.runtime_notifyListNotifyAll
func NotifyListNotifyAll(l *NotifyList)

//go:linkname NotifyListNotifyOne sync.runtime_notifyListNotifyOne
func NotifyListNotifyOne(l *NotifyList)

//go:linkname notifyListCheck sync.runtime_notifyListCheck
func notifyListCheck(size uintptr)

func init() {
	notifyListCheck(unsafe.Sizeof(NotifyList{}))
}
