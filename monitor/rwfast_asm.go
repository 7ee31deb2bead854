//go:build amd64 && gc && !race && !purego

package monitor

import "github.com/locksmith-go/locksmith/internal/core"

// rwLock, rwUnlock, rwRLock and rwRUnlock are RWMonitor's fast paths in
// assembly (rwfast_amd64.s), for the reason package mutex has them for
// RWMutex (see its rwfast_asm.go): in Go each is a call to read the
// goroutine ID plus a call that cannot inline. Here each method inlines
// to one call, which reads the ID in line and does a re-entry (a hold
// count changed with a plain add: only the holder touches it) or what
// RLockFast, RUnlockFast, LockFast and Unlock do on their first try;
// anything else jumps to the Go code before it has changed anything, or
// to a Go function that finishes what the assembly started. Order mode
// sets fastWord to 0, so every call then runs the Go code.
//
// A re-entrant read finds the caller's hold in its home slot with a load
// and a compare, and adds to the count without an atomic write: only
// the slot's reader changes it, and a draining writer looks only at the
// slots (a re-entry leaves the slot as it is, so it cannot hide or
// reveal a reader).
//
// Measured as for package mutex (docs/rwlocks.md, CPU time per pair
// against sync.RWMutex's in the same run): the first read pair costs
// 9.6 ns (1.5x sync.RWMutex's read pair) against 23.3 ns (3.8x) for the
// Go code, the re-entrant read pair 7.6 ns (1.2x) against 16.2 ns
// (2.6x), the write pair 10.3 ns (0.75x) against 26.4 ns (1.85x).
func rwLock(rw *RWMonitor)

func rwUnlock(rw *RWMonitor)

func rwRLock(rw *RWMonitor)

func rwRUnlock(rw *RWMonitor)

// Constants for the assembly (go_asm.h).
//
//lint:file-ignore U1000 the constants here are read only by the assembly, through go_asm.h
const (
	rwStateOff       = core.RWStateOffset
	rwMetaOff        = core.RWMetaOffset
	rwRsOff          = core.RWRsOffset
	rwSlotsOff       = core.RWSlotsOffset
	rwHoldsOff       = core.RWHoldsOffset
	rwSlotMask       = core.RWSlotMask
	rwReadersWaiting = core.RWReadersWaiting
	rwDraining       = core.RWDraining
	rwOverflowShift  = core.RWOverflowShift
)
