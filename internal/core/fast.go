package core

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// What the assembly fast paths of packages mutex and monitor need to know
// about a Lock and the detection mode. They read the state word at
// StateOffset (the compile-time check below keeps it at the start of the
// Lock), and a fast word of their own (RegisterFastWord) with a plain load,
// which is an atomic load on amd64.

// OwnerShift is where the owner's goroutine ID starts in the state word.
const OwnerShift = ownerShift

// StateOffset is the offset of the state word in a Lock.
const StateOffset = unsafe.Offsetof(Lock{}.state)

var _ [0]struct{} = [StateOffset]struct{}{} // the state word comes first

// PCOffset is the offset of the holder's acquisition PC in a Lock
// (SetHolderPC), which the assembly fast paths store after they take it.
const PCOffset = unsafe.Offsetof(Lock{}.pc)

// MetaOffset is the offset of the metadata pointer in a Lock. A Monitor's
// assembly re-entry and partial release go to the Go code when it is not
// nil, so that the hold count beyond the first is published for Dump
// (SetExtraHolds) on exactly the locks that Dump can see.
const MetaOffset = unsafe.Offsetof(Lock{}.meta)

var _ [0]struct{} = [unsafe.Offsetof(Pointer[Meta]{}.v)]struct{}{} // the pointer starts a Pointer

// A fast word holds gid.Offset() while the assembly fast paths may run:
// gid has a fast goroutine ID and OrderOn is false (Order mode is off and
// no recheck is pending). Otherwise it holds 0,
// and the assembly goes to the Go code. One word answers both questions
// with one load: testing the mode through a pointer as well as the
// offset cost a noticeable share of an uncontended Lock/Unlock pair (see
// BenchmarkMutexUncontended in mutex/bench_test.go).
var (
	fastMu    sync.Mutex
	fastWords []*atomic.Uintptr // guarded by fastMu
)

// RegisterFastWord sets w for the mode in force and keeps it in step with
// every later SetMode. Packages call it during initialisation.
func RegisterFastWord(w *atomic.Uintptr) {
	fastMu.Lock()
	defer fastMu.Unlock()
	fastWords = append(fastWords, w)
	w.Store(fastValue())
}

// An order word is a fast word's complement for Order mode: it holds
// gid.Offset() while OrderOn is true and gid has a fast goroutine ID, and
// 0 otherwise. An assembly Lock that finds its fast word 0 and its order
// word set may take the lock with its own CompareAndSwap and store the
// holder's PC from its return address, as its fast path does, and then
// go to Go code that forwards the acquisition (Acquired, which loads the
// mode word again): the Go code would otherwise find the caller's PC by
// a walk of the frame pointers, a seventh of the CPU profile of an
// uncontended Order-mode pair (go test -run '^$' -bench
// 'MutexUncontendedPair/mutex.Mutex/order' -cpuprofile cpu.out
// ./bench/detectcost).
var orderWords []*atomic.Uintptr // guarded by fastMu

// RegisterOrderWord sets w for the mode in force and keeps it in step
// with every later SetMode, as RegisterFastWord does.
func RegisterOrderWord(w *atomic.Uintptr) {
	fastMu.Lock()
	defer fastMu.Unlock()
	orderWords = append(orderWords, w)
	w.Store(orderValue())
}

// updateFastWords brings every fast and order word in step with the mode
// word; everything that changes the word (SetMode, SetRecheck,
// runRecheck) calls it afterwards.
func updateFastWords() {
	fastMu.Lock()
	defer fastMu.Unlock()
	v := fastValue()
	for _, w := range fastWords {
		w.Store(v)
	}
	v = orderValue()
	for _, w := range orderWords {
		w.Store(v)
	}
}

// orderValue is what an order word holds under the mode in force; fastMu
// is held. It is 0 without the frame-pointer walk (fpstack.CheapCaller),
// where the return address the assembly sees is not always the caller's
// site (the tests of holder sites expect fast-path sites only where the
// walk exists), so that the Go code keeps finding the site with
// runtime.Callers, as SitePC does in Order mode.
func orderValue() uintptr {
	if !OrderOn() || !fpstack.CheapCaller {
		return 0
	}
	return gid.Offset()
}

// fastValue is what a fast word holds under the mode in force; fastMu is
// held, so that concurrent SetModes leave the words as the last mode says.
func fastValue() uintptr {
	if OrderOn() {
		return 0
	}
	return gid.Offset()
}

// ReleaseSlow is Release after its CompareAndSwap has failed, for the
// assembly fast paths, which have made that CompareAndSwap already.
func (l *Lock) ReleaseSlow(g int64) bool { return l.releaseSlow(g) }

// What the assembly fast paths of mutex.RWMutex and monitor.RWMonitor
// need to know about an RWLock (see RWLock for the state word rs and the
// reader slots). The assembly indexes slots and reader PCs by 8 and holds
// by 4 bytes.
const (
	RWStateOffset     = unsafe.Offsetof(RWLock{}.w) + StateOffset
	RWMetaOffset      = unsafe.Offsetof(RWLock{}.w) + MetaOffset
	RWPCOffset        = unsafe.Offsetof(RWLock{}.w) + PCOffset
	RWRsOffset        = unsafe.Offsetof(RWLock{}.rs)
	RWSlotsOffset     = unsafe.Offsetof(RWLock{}.slots)
	RWHoldsOffset     = unsafe.Offsetof(RWLock{}.holds)
	RWReaderPCsOffset = unsafe.Offsetof(RWLock{}.rpcs)
	RWSlotMask        = rwSlots - 1
	RWReadersWaiting  = rsReadersWaiting
	RWDraining        = rsDraining
	RWOverflowShift   = rsOvShift
)

var (
	_ [unsafe.Sizeof(RWLock{}.slots) - 8*rwSlots]struct{} // 8-byte slots
	_ [8*rwSlots - unsafe.Sizeof(RWLock{}.slots)]struct{}
	_ [unsafe.Sizeof(RWLock{}.holds) - 4*rwSlots]struct{} // 4-byte holds
	_ [4*rwSlots - unsafe.Sizeof(RWLock{}.holds)]struct{}
	_ [unsafe.Sizeof(RWLock{}.rpcs) - 8*rwSlots]struct{} // 8-byte reader PCs
	_ [8*rwSlots - unsafe.Sizeof(RWLock{}.rpcs)]struct{}
)
