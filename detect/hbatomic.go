//go:build !race

package detect

import "sync/atomic"

// The atomics of the goroutine table and the lone records (goroutines.go,
// lone.go): sync/atomic's outside race builds. In race builds they are
// hidden from the race detector (hbatomic_race.go).
type (
	hbInt64  = atomic.Int64
	hbInt32  = atomic.Int32
	hbUint32 = atomic.Uint32
	hbBool   = atomic.Bool
)

// raceAcquireHolds is called by the sweeper before it reads the Metas of
// s's records: nothing outside race builds.
func raceAcquireHolds(*gstate) {}

// copyPCs returns the stack of another goroutine's held record, for
// heldPCs: the record's own outside race builds.
func copyPCs(pcs []uintptr) []uintptr { return pcs }

// shiftHeld moves the records above i in hs down by one.
func shiftHeld(hs []held, i int) { copy(hs[i:], hs[i+1:]) }

// raceReleaseSlot and raceAcquireSlot order a drain of a slot of nests
// after the goroutine that filled it: nothing outside race builds.
func raceReleaseSlot(*nestSlot) {}
func raceAcquireSlot(*nestSlot) {}

// raceBuild: the race detector is on (see defaultMode).
const raceBuild = false
