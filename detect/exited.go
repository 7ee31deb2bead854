package detect

import (
	"fmt"
	"strings"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Exited builds the report of a wait for a lock whose holder has exited
// holding it, found by the exited-holder check (internal/core/exited.go):
// a Deadlock of two steps, the waiting goroutine and the holder, marked
// Exited, with where the holder took the lock when Order mode recorded it
// (its records outlive it while the lock stays held). It is called in the
// waiting goroutine, which then returns the error or panics with it.
func (engine) Exited(w core.Hop, holder int64) error {
	info := lockInfo(w.Lock.Meta(w.Class))
	stacks := goroutineStacks(map[int64]bool{w.G: true})
	mode := CurrentMode()
	r := &Report{Kind: Deadlock, Mode: mode, Steps: []Step{
		{Goroutine: w.G, WaitsFor: info, WaitsForReading: w.Read, Stack: stacks[w.G]},
		{Goroutine: holder, Holds: info, HoldsForReading: w.HolderRead, Exited: true},
	}}
	if mode == Order {
		r.Steps[1].HoldsAt = symbolise(heldPCs(holder, info.ID))
	}
	if r.Steps[1].HoldsAt == nil {
		// The PC the lock keeps of the holder's acquisition (the
		// writer's, or its reader slot's) is still its own: the lock is
		// held by the exited goroutine for good.
		r.Steps[1].HoldsAt = heldFrames(w.Lock, w.Class, holder, w.HolderRead)
	}
	if note(r, []uint64{info.ID}, []int64{w.G, holder}) {
		deliver(r)
	}
	return &DeadlockError{Report: r}
}

// exitedMark follows the goroutine of step s in a line that names it:
// ", which has exited" for an Exited step.
func exitedMark(s Step) string {
	if s.Exited {
		return ", which has exited"
	}
	return ""
}

// exitedStep prints an Exited step of a Deadlock report.
func exitedStep(b *strings.Builder, r *Report, s Step) {
	fmt.Fprintf(b, "goroutine %d, which has exited:\n", s.Goroutine)
	fmt.Fprintf(b, "  holds %s%s\n", s.Holds, access(s.Holds, s.HoldsForReading))
	r.lockedAt(b, s, "    ")
	b.WriteString("  and holds it for good: Go runs no code at a goroutine's exit, and only the holder may unlock it\n")
}
