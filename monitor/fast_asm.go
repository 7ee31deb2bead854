//go:build amd64 && gc && !race && !purego

package monitor

import (
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// lock and unlock are Lock's and Unlock's fast paths in assembly
// (fast_amd64.s), for the same reason as package mutex's (see its
// fast_asm.go): in Go, Lock and Unlock cannot inline, and a pair is four
// calls. Here each inlines to one call, which reads the goroutine ID and
// then does what lockGo and unlockGo do for a re-entry (the hold count
// only) or a first entry (one CompareAndSwap); anything else (the monitor
// is held by another goroutine or has waiters, Order mode is on, or gid
// has no fast goroutine ID) jumps to lockGo or unlockGo, which start over.
//
// Unlock's last hold is released by the CompareAndSwap alone, which is
// also its owner check, without first reading the state word and writing
// the hold count. Rejected alternative: that read and write first, which
// made both the first-entry pair and the re-entry pair dearer (go test
// -run '^$' -bench 'Monitor(Uncontended|Reentry)' ./monitor).
//
// No go:noescape: the slow paths keep m (Order mode records the lock).
func lock(m *Monitor)

func unlock(m *Monitor)

// entrySkip is how many frames lie between lockGo or lockHeld and the
// caller of Lock: the ABI wrapper through which the assembly reaches
// them.
const entrySkip = 1

// fastWord is what the assembly tests first: gid's offset of the ID in
// the g while the fast path may run (a fast goroutine ID, Order mode off),
// else 0; core keeps it in step with the mode.
var fastWord atomic.Uintptr

// orderWord is what lock tests when fastWord is 0: gid's offset while
// Order mode is on with a fast goroutine ID, else 0 (core.RegisterOrderWord).
var orderWord atomic.Uintptr

func init() {
	core.RegisterFastWord(&fastWord)
	core.RegisterOrderWord(&orderWord)
}

// lockOrdered is where lock goes in Order mode once its own
// CompareAndSwap has taken a free m and stored the holder's PC: it
// forwards the first entry, as lockGo does after its CompareAndSwap.
//
//lint:ignore U1000 fast_amd64.s jumps here
//go:noinline
func lockOrdered(m *Monitor) { m.acquired(gid.Get(), false) }

// Constants for the assembly (go_asm.h).
//
//lint:file-ignore U1000 the constants here are read only by the assembly, through go_asm.h
const (
	ownerShift = core.OwnerShift
	stateOff   = core.StateOffset
	metaOff    = core.MetaOffset
	pcOff      = core.PCOffset
)
