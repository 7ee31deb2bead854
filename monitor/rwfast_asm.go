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
// The assembly costs well under half what the Go code does for each of
// the first read pair, the re-entrant read pair and the write pair:
// docs/rwlocks.md has the figures against sync.RWMutex, and the command
// that measures them (run once with -tags purego for the Go code).
func rwLock(rw *RWMonitor)

func rwUnlock(rw *RWMonitor)

func rwRLock(rw *RWMonitor)

func rwRUnlock(rw *RWMonitor)

// Constants for the assembly (go_asm.h).
//
//lint:file-ignore U1000 the constants here are read only by the assembly, through go_asm.h
const (
	rwStateOff       = core.RWStateOffset
	rwPCOff          = core.RWPCOffset
	rwMetaOff        = core.RWMetaOffset
	rwRsOff          = core.RWRsOffset
	rwSlotsOff       = core.RWSlotsOffset
	rwHoldsOff       = core.RWHoldsOffset
	rwReaderPCsOff   = core.RWReaderPCsOffset
	rwSlotMask       = core.RWSlotMask
	rwReadersWaiting = core.RWReadersWaiting
	rwDraining       = core.RWDraining
	rwOverflowShift  = core.RWOverflowShift
)
