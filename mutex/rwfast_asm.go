//go:build amd64 && gc && !race && !purego

package mutex

import "github.com/locksmith-go/locksmith/internal/core"

// rwLock, rwUnlock, rwRLock and rwRUnlock are RWMutex's uncontended paths
// in assembly (rwfast_amd64.s), for the reason Mutex's are (fast_asm.go):
// in Go the goroutine ID is a call that cannot inline, so Lock and RLock
// cannot either (the inliner costs RLock at 261 against its budget of
// 80), and a pair is four calls. The assembly reads the ID in line and
// does what RLockFast, RUnlockFast, LockFast and Unlock do on their
// first try, with the same atomic operations in the same order (the
// handshakes documented on core.RWLock); anything else jumps to the Go
// code before it has changed anything, or to a Go function that finishes
// what the assembly started (rwRLockRetreat, rwRUnlockWake, rwLockReaders,
// rwUnlockHeld, rwUnlockWake). Order mode sets fastWord to 0, so every
// call then runs the Go code, which records the acquisition.
//
// The read pair and the write pair cost well under half what the Go code
// does: docs/rwlocks.md has the figures against sync.RWMutex, and the
// command that measures them (run once with -tags purego for the Go
// code).
func rwLock(rw *RWMutex)

func rwUnlock(rw *RWMutex)

func rwRLock(rw *RWMutex)

func rwRUnlock(rw *RWMutex)

// Constants for the assembly (go_asm.h).
//
//lint:file-ignore U1000 the constants here are read only by the assembly, through go_asm.h
const (
	rwStateOff       = core.RWStateOffset
	rwPCOff          = core.RWPCOffset
	rwRsOff          = core.RWRsOffset
	rwSlotsOff       = core.RWSlotsOffset
	rwHoldsOff       = core.RWHoldsOffset
	rwReaderPCsOff   = core.RWReaderPCsOffset
	rwSlotMask       = core.RWSlotMask
	rwReadersWaiting = core.RWReadersWaiting
	rwDraining       = core.RWDraining
	rwOverflowShift  = core.RWOverflowShift
)
