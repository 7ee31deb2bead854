//go:build go1.24 && !purego

package rt

// Re-check on a new Go release: weak.Pointer is still one word, the
// address of the runtime's handle for its object (an atomic uintptr that
// holds the object's address and that the sweep of the object's span
// stores 0 to once the object is found unreachable, before the object's
// memory can be reused: freeSpecial in runtime/mheap.go, called from
// mspan.sweep), and the zero Pointer holds nil; and the heap's memory is
// never unmapped (WeakLoad may load from an object just freed). setupWeak
// checks the layout and the handle's value at start-up; it cannot check
// the clearing without a collection.

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/locksmith-go/locksmith/internal/compat"
)

// weakPeek reports whether WeakCleared may read the handle.
var weakPeek = setupWeak(os.Stderr)

// setupWeak checks weak.Pointer's layout on a fresh object and on the
// zero Pointer; on a mismatch it writes one warning to w and returns
// false.
func setupWeak(w io.Writer) bool {
	x := new([2]uintptr) // not a tiny allocation: an object of its own
	p := weak.Make(x)
	var zero weak.Pointer[[2]uintptr]
	ok := unsafe.Sizeof(p) == unsafe.Sizeof(uintptr(0)) &&
		handleOf(unsafe.Pointer(&zero)) == nil &&
		handleOf(unsafe.Pointer(&p)) != nil &&
		atomic.LoadUintptr((*uintptr)(handleOf(unsafe.Pointer(&p)))) == uintptr(unsafe.Pointer(x))
	runtime.KeepAlive(x)
	if !ok {
		fmt.Fprintf(w, "locksmith: weak.Pointer's layout is not the one expected on %s; "+
			"scans for collected locks call Value, which keeps every lock they look at "+
			"alive through a collection they overlap (hiding goroutine leaks from "+
			"runtime/pprof's goroutineleak profile).\n", runtime.Version())
	}
	return ok
}

// WeakPeeks reports whether WeakCleared and WeakLoad read the runtime's
// handle, making nothing reachable, rather than calling Value.
func WeakPeeks() bool { return weakPeek }

// handleOf returns the handle of the weak.Pointer at p.
func handleOf(p unsafe.Pointer) unsafe.Pointer { return *(*unsafe.Pointer)(p) }

// WeakCleared reports whether the collector has cleared p: its object was
// found unreachable (or p is the zero Pointer). Unlike p.Value() == nil it
// makes nothing reachable: Value shades the object when called during a
// collection's marking, so that a scan of many weak pointers that
// overlaps a collection keeps all their objects, and everything they
// point to, alive through it. An object found unreachable is cleared
// when the sweep reaches its span, so WeakCleared may still report false
// for an object the last collection found dead, until the sweep is done
// (Value sweeps the span first).
func WeakCleared[T any](w compat.Weak[T]) bool {
	if !weakPeek {
		return w.Value() == nil
	}
	p := w.Std()
	h := handleOf(unsafe.Pointer(&p))
	return h == nil || atomic.LoadUintptr((*uintptr)(h)) == 0
}

// WeakLoad loads, each atomically, the len(words) 64-bit words of p's
// object from offset off on (off must be 8-byte aligned, and the words
// inside the object), and reports whether they are the object's: false
// if p is cleared, or was cleared while they were loaded, leaving words
// unspecified. Like WeakCleared it makes nothing reachable: it reads the
// object at the address its handle holds, as an integer, and reads the
// handle again after, so that an object freed meanwhile is told apart (its
// handle is cleared before its memory can be reused). An object found
// unreachable whose span the sweep has not reached yet still reads as
// itself. The address is never held as a pointer across a safe point:
// the collector, which would take a freed object's address for a bad
// pointer, never sees it, and checkptr, which cannot know the handle's
// protocol, is off here.
//
//go:nocheckptr
func WeakLoad[T any](w compat.Weak[T], off uintptr, words []int64) bool {
	if !weakPeek {
		return weakLoadValue(w, off, words)
	}
	p := w.Std()
	h := (*uintptr)(handleOf(unsafe.Pointer(&p)))
	if h == nil {
		return false
	}
	a := atomic.LoadUintptr(h)
	if a == 0 {
		return false
	}
	for i := range words {
		words[i] = atomic.LoadInt64((*int64)(unsafe.Add(unsafe.Pointer(nil), a+off+8*uintptr(i))))
	}
	return atomic.LoadUintptr(h) == a
}
