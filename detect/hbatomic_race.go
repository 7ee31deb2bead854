//go:build race

package detect

import (
	"runtime"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/rt"
)

// The race detector's rule for Order mode's goroutine table.
//
// Every goroutine that takes a lock in Order mode claims a gstate of the
// package-level table (goroutines.go), marks it busy and leaves it with
// atomic operations on its word, and the first claim of a free slot arms
// the sweeper (sweepArmed), which visits every gstate the same way. Had
// those been sync/atomic's, the race detector would order each goroutine
// after every goroutine that had armed the sweeper or used its slot before
// it, and after the sweeper, so that a data race between two goroutines
// that each take a different lock alone would go unreported. So in race
// builds the table's words and counters, sweepArmed and orderEpoch are
// hidden atomics (rt.HiddenLoad64 and the rest: neither synchronization
// nor memory accesses for the detector), and every access to what they
// guard (a gstate's records, its lone record) is made by //go:norace code,
// so that the detector neither orders the parties nor checks what it no
// longer sees ordered. The one thing a reader of another goroutine's
// records needs ordered before it, the Meta's fields set by its maker, is
// released on the Meta's address when it is made and acquired by the
// sweeper before it asks the Meta whether the lock is still held
// (raceAcquireHolds); a stack read from another goroutine's record is
// copied by //go:norace code (copyPCs).
//
// They are also cheaper: each sync/atomic operation is a call into the
// race runtime, several times a plain access, and an uncontended
// Lock/Unlock pair taken alone makes several, where a hidden one costs
// what the instruction costs (go test -race -run '^$' -bench LonePair
// -cpu 1 ./detect).

type hbInt64 struct{ v int64 }

func (a *hbInt64) Load() int64                        { return rt.HiddenLoad64(&a.v) }
func (a *hbInt64) Store(v int64)                      { rt.HiddenStore64(&a.v, v) }
func (a *hbInt64) CompareAndSwap(old, new int64) bool { return rt.HiddenCas64(&a.v, old, new) }

type hbInt32 struct{ v int32 }

func (a *hbInt32) Load() int32       { return rt.HiddenLoad32(&a.v) }
func (a *hbInt32) Add(d int32) int32 { return rt.HiddenAdd32(&a.v, d) }

type hbUint32 struct{ v int32 }

func (a *hbUint32) Load() uint32        { return uint32(rt.HiddenLoad32(&a.v)) }
func (a *hbUint32) Add(d uint32) uint32 { return uint32(rt.HiddenAdd32(&a.v, int32(d))) }

type hbBool struct{ v int32 }

func (a *hbBool) Load() bool { return rt.HiddenLoad32(&a.v) != 0 }
func (a *hbBool) Store(v bool) {
	var x int32
	if v {
		x = 1
	}
	rt.HiddenStore32(&a.v, x)
}
func (a *hbBool) CompareAndSwap(old, new bool) bool {
	var o, n int32
	if old {
		o = 1
	}
	if new {
		n = 1
	}
	return rt.HiddenCas32(&a.v, o, n)
}

// raceAcquireHolds orders the sweeper, which is about to read the Metas of
// s's records, another goroutine's, after each Meta's maker.
//
//go:norace
func raceAcquireHolds(s *gstate) {
	for i := range s.held {
		core.RaceAcquireMeta(s.held[i].meta)
	}
}

// copyPCs returns a copy of the stack of another goroutine's held record,
// for heldPCs: its caller reads it as instrumented code, which is not
// ordered after the goroutine that recorded it.
//
//go:norace
func copyPCs(pcs []uintptr) []uintptr {
	out := make([]uintptr, len(pcs))
	//lint:ignore S1001 copy is runtime.slicecopy under -race, checked even from //go:norace code (see shiftHeld)
	for i := range pcs {
		out[i] = pcs[i]
	}
	return out
}

// shiftHeld moves the records above i in hs down by one, by //go:norace
// code: a copy is runtime.slicecopy under -race, whose accesses the race
// detector checks even from //go:norace code, and two goroutines that use
// the same gstate in turn would race on them.
//
//go:norace
func shiftHeld(hs []held, i int) {
	for j := i; j+1 < len(hs); j++ {
		hs[j] = hs[j+1]
	}
}

// raceReleaseSlot, by the goroutine that filled a slot of nests (or made
// it ready), and raceAcquireSlot, by whoever drains it, order the drain's
// reads of the slot's locks (core.Lock.Meta) after that goroutine's
// accesses: the slot's own lock, nestMu, is hidden. Only the drain is
// ordered after the nesting goroutine, not the nesting goroutine after
// anyone.
//
//go:norace
func raceReleaseSlot(e *nestSlot) { runtime.RaceReleaseMerge(unsafe.Pointer(e)) }

//go:norace
func raceAcquireSlot(e *nestSlot) { runtime.RaceAcquire(unsafe.Pointer(e)) }

// raceBuild: the race detector is on (see defaultMode).
const raceBuild = true
