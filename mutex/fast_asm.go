//go:build amd64 && gc && !race && !purego

package mutex

import (
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// lock and unlock are Lock's and Unlock's uncontended fast paths in
// assembly (fast_amd64.s): read the goroutine ID, one CompareAndSwap on
// the state word, exactly as lockGo and unlockGo do it; anything else
// (the CompareAndSwap fails, Order mode is on, or gid has no fast
// goroutine ID) jumps to lockGo or unlockGo, which start over.
//
// Why assembly: the goroutine ID can only be read by a call to assembly
// (the compiler cannot inline it), and Lock in Go then cannot be inlined
// into its caller either (two calls, the ID and the slow path, cost 114
// against the inliner's budget of 80). A pair in Go is four calls:
// Lock, gid.Get, Unlock, gid.Get, dearer than bench.FloorLock's pair
// (goid.Get and one CompareAndSwap per call; its Unlock inlines). Here
// Lock and Unlock inline to one call each, and the pair costs less than
// the floor lock's (go test -run '^$' -bench MutexUncontended ./mutex;
// the Go code alone with -tags purego).
//
// No go:noescape: the slow paths keep m (Order mode records the lock).
func lock(m *Mutex)

func unlock(m *Mutex)

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
// CompareAndSwap has taken m and stored the holder's PC: it forwards the
// acquisition, as lockGo does after its CompareAndSwap.
//
//lint:ignore U1000 fast_amd64.s jumps here
//go:noinline
func lockOrdered(m *Mutex) {
	if mw := core.OrderWord(); mw >= core.ModeOrder {
		m.orderAcquired(gid.Get(), false, mw)
	}
}

// Constants for the assembly (go_asm.h).
//
//lint:file-ignore U1000 the constants here are read only by the assembly, through go_asm.h
const (
	ownerShift = core.OwnerShift
	stateOff   = core.StateOffset
	pcOff      = core.PCOffset
)
