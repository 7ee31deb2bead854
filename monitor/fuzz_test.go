package monitor_test

// Model-based fuzzing of Monitor, by the driver in internal/testkit/fuzzmodel:
// re-entry, hold counts and the implicit condition (Wait, WaitTimeout,
// WaitContext, Notify, NotifyAll) by three workers, checked step by step
// against a reference model. Misuse (Unlock, Wait or Notify by a goroutine
// that does not hold the monitor) must panic with exactly the documented
// error and change nothing; a panic inside Do must leave the hold count as
// it was.
//
// Run longer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzMonitor$' -fuzztime 200000x ./monitor
//
// The seed corpus is testdata/fuzz/FuzzMonitor/<seed name>;
// TestFuzzMonitorSeeds checks it against fzSeeds, and rewrites it with
// -fuzzseeds.write.

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	fm "github.com/locksmith-go/locksmith/internal/testkit/fuzzmodel"
	"github.com/locksmith-go/locksmith/monitor"
)

func FuzzMonitor(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fm.Run(t, fzMonitor, data) })
}

// fzMonitorMisuse is the misuse of op by a goroutine that does not hold
// the monitor.
func fzMonitorMisuse(op string) func(g, holder int64) (string, error) {
	return func(g, holder int64) (string, error) {
		return fm.LockMisuse("monitor", op, g, holder), monitor.ErrNotOwner
	}
}

var fzMonitor = fm.Subject{
	Name:         "monitor.Monitor",
	Ops:          slices.Concat(fm.CondOps, []fm.Op{fm.DoPanic}),
	Reentrant:    true,
	NotOwner:     monitor.ErrNotOwner,
	Pkg:          "monitor",
	WaitMisuse:   fzMonitorMisuse("wait"),
	SignalMisuse: fzMonitorMisuse("notify"),
	New: func() fm.Instance {
		m := new(monitor.Monitor)
		return fm.Instance{
			Lock:     m,
			QueueLen: func() int { return monitor.QueueLen(m) },
			Cond:     fzImplicitCond{m},
			Do:       m.Do,
			// The owner creates the implicit condition on first use:
			// create it now, so that ImplicitWaiters, which reads it,
			// is ordered after (by the driver's channel receive).
			Prepare: func() { m.Lock(); m.Notify(); m.Unlock() },
		}
	},
}

// fzImplicitCond is a Monitor's implicit condition as a fm.Cond.
type fzImplicitCond struct{ m *monitor.Monitor }

func (c fzImplicitCond) Wait()                                 { c.m.Wait() }
func (c fzImplicitCond) WaitTimeout(d time.Duration) bool      { return c.m.WaitTimeout(d) }
func (c fzImplicitCond) WaitContext(ctx context.Context) error { return c.m.WaitContext(ctx) }
func (c fzImplicitCond) Signal()                               { c.m.Notify() }
func (c fzImplicitCond) Broadcast()                            { c.m.NotifyAll() }
func (c fzImplicitCond) Waiters() int                          { return monitor.ImplicitWaiters(c.m) }

func fzEncode(mode detect.Mode, steps ...fm.Step) []byte {
	return fm.Encode(fzMonitor.Ops, mode, steps...)
}

// fzSeeds is the seed corpus: that of every lock with a condition (whose
// names say Signal and Broadcast for Notify and NotifyAll), and two of the
// Monitor's own.
var fzSeeds = func() map[string][]byte {
	seeds := fm.CondSeeds(fzMonitor.Ops)
	maps.Copy(seeds, map[string][]byte{
		"do_panic_restores_holds": fzEncode(detect.Order,
			fm.S(fm.DoPanic, 0), fm.S(fm.Lock, 0), fm.S(fm.DoPanic, 0), fm.S(fm.Lock, 0), fm.S(fm.DoPanic, 0), fm.S(fm.DoPanic, 1),
			fm.S(fm.Unlock, 0), fm.S(fm.Lock, 1), fm.S(fm.Unlock, 0), fm.S(fm.DoPanic, 2), fm.S(fm.Unlock, 1)),
		"reentry_ignores_done_context": fzEncode(detect.Cycles,
			fm.S(fm.LockDone, 0), fm.S(fm.Lock, 0), fm.S(fm.LockDone, 0), fm.S(fm.LockCtx, 0), fm.S(fm.LockDone, 1),
			fm.S(fm.WaitCtx, 0), fm.S(fm.Lock, 1), fm.S(fm.Signal, 1), fm.S(fm.Unlock, 1), fm.S(fm.Unlock, 0), fm.S(fm.Unlock, 0), fm.S(fm.Unlock, 0)),
	})
	return seeds
}()

// TestFuzzMonitorSeeds checks that the committed seed corpus is the one
// fzSeeds describes (rewriting it with -fuzzseeds.write); plain go test
// then runs every seed through FuzzMonitor.
func TestFuzzMonitorSeeds(t *testing.T) { fm.CheckSeeds(t, "monitor", "FuzzMonitor", fzSeeds) }
