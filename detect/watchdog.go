package detect

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// The wait-timeout watchdog. There is no timer per blocked goroutine: one
// shared time.AfterFunc timer re-arms itself every timeout/4 for as long as
// a wait timeout is configured, and each firing scans the registry of
// blocked goroutines (a short goroutine run by the timer; none between
// scans). A wait is reported once, at most a quarter of the timeout late.
//
// The chain of scans is started, and only ever re-armed, by goroutines
// outside testing/synctest bubbles: by Configure (and the configuration
// installed at start-up), or by the next goroutine that parks outside any
// bubble if the chain is not running. A goroutine that parks inside a
// bubble never arms it: a timer made in a bubble belongs to the bubble, so
// it would run on the bubble's fake clock, stop firing for good when the
// bubble ends, and keep a bubble whose goroutines are all blocked busy
// advancing fake time, where synctest should report the deadlock at once.
// Waits inside bubbles are still reported, in real time (the registry's
// clock is the runtime's monotonic clock), by the chain outside. That is
// why the chain does not stop when nothing waits: a goroutine in a bubble
// could not restart it.
//
// Each configuration starts its own chain: a chain armed under an older
// configuration (with, say, Order mode's 30 s timeout and a 7.5 s period)
// is stopped when the new one starts: its pending timer is stopped, so
// that a shorter timeout configured later takes effect at once rather
// than after the old period, and so that rapid reconfiguration (a
// Configure and its restore per test) leaves one pending timer, not one
// per configuration until each fires. If the new configuration was
// installed from inside a bubble, which cannot start a chain, the old
// chain carries on under it instead.
var wd struct {
	timeout atomic.Int64  // nanoseconds; 0 is off
	gen     atomic.Uint64 // configuration generation, bumped by each install
	armed   atomic.Uint64 // the generation whose scans are scheduled, or 0

	// mu serialises arming: a chain's next timer is scheduled, and an
	// older chain's pending timer stopped, under it, so that timer is
	// always the one timer of the chain armed names.
	mu    sync.Mutex
	timer *time.Timer // guarded by mu: the armed chain's latest timer
	// pending counts the scheduled timers that have neither fired nor
	// been stopped (for tests).
	pending atomic.Int32
}

func watchdogConfigured(d time.Duration) {
	wd.timeout.Store(int64(d))
	wd.gen.Add(1)
	condWatchConfigured(d)
	if d > 0 {
		watchdogParked()
	}
}

// Every park calls it: the values of its loads are all it reads, hidden
// from the race detector (see internal/core/racehb_race.go), which would
// otherwise order each parker after the scan that rearmed the chain, and
// so after every parker the scan saw.
func watchdogParked() {
	core.RaceHide()
	g := wd.gen.Load()
	d := time.Duration(wd.timeout.Load())
	a := wd.armed.Load()
	core.RaceShow()
	if d <= 0 || a == g || core.InBubble() {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.armed.CompareAndSwap(a, g) {
		if wd.timer != nil && wd.timer.Stop() {
			wd.pending.Add(-1)
		}
		schedule(g, d)
	}
}

// schedule arms chain g's next scan; wd.mu is held.
func schedule(g uint64, d time.Duration) {
	wd.pending.Add(1)
	wd.timer = time.AfterFunc(period(d), func() {
		wd.pending.Add(-1)
		scan(g)
	})
}

func period(d time.Duration) time.Duration { return max(d/4, time.Millisecond) }

func scan(g uint64) {
	if cur := wd.gen.Load(); cur != g {
		// Reconfigured. A configuration installed outside bubbles armed
		// its own chain (armed moved on) and this one stops; otherwise
		// this chain carries on under the new configuration.
		if !wd.armed.CompareAndSwap(g, cur) {
			return
		}
		g = cur
	}
	d := time.Duration(wd.timeout.Load())
	if d <= 0 {
		wd.armed.CompareAndSwap(g, 0)
		return
	}
	now := core.Now()
	condReports, behindCond := condScan(now, d) // before the lock waits it reports are taken below
	overdue := core.Overdue(now-int64(d), behindCond)
	wd.mu.Lock()
	if wd.armed.Load() == g {
		schedule(g, d)
	} // else a newer chain has started meanwhile: this one ends here
	wd.mu.Unlock()
	// Reports go out after the next scan is scheduled, so that a reporter
	// that panics or exits its goroutine (t.FailNow) cannot stop the
	// watchdog.
	reports := make([]*Report, 0, len(overdue)+len(condReports))
	reports = append(reports, condReports...)
	for _, wi := range overdue {
		r := waitReport(wi, time.Duration(now-wi.Since))
		gs := []int64{wi.G}
		if len(r.Steps) > 1 {
			gs = append(gs, r.Steps[1].Goroutine)
		}
		if note(r, []uint64{r.Steps[0].WaitsFor.ID}, gs) {
			reports = append(reports, r)
		}
	}
	deliverOverdue(reports)
}

// deliverOverdue delivers wait-timeout reports on the timer's goroutine,
// which belongs to no caller: a panic there would end the program, so a
// reporter's panic is recovered and written to stderr as a reporter
// failure, and the next report goes out. A reporter that ends the
// goroutine (runtime.Goexit, as t.FailNow does) gets its way; the reports
// after its own go out from a new goroutine.
func deliverOverdue(rs []*Report) {
	next := 0
	defer func() {
		if next < len(rs) {
			go deliverOverdue(rs[next:])
		}
	}()
	for next < len(rs) {
		r := rs[next]
		next++
		deliverRecovered(r)
	}
}

// deliverRecovered delivers r, recovering a reporter's panic, except
// PanicReporter's in a test binary (waitStop), whose purpose is to end
// the binary.
func deliverRecovered(r *Report) {
	defer func() {
		if v := recover(); v != nil {
			if _, stop := v.(*waitStop); stop {
				panic(v)
			}
			fmt.Fprintf(stderr(), "locksmith: the wait-timeout reporter panicked: %v\n(the report it was given follows)\n%s", v, r)
		}
	}()
	deliver(r)
}

func waitReport(wi core.WaitInfo, waited time.Duration) *Report {
	info := lockInfo(wi.Lock.Meta(wi.Class))
	holders := waitHolders(wi)
	want := map[int64]bool{wi.G: true}
	for _, h := range holders {
		want[h] = true
	}
	stacks := goroutineStacks(want)
	r := &Report{Kind: WaitTimeout, Mode: CurrentMode(), Waited: waited}
	r.Steps = append(r.Steps, Step{Goroutine: wi.G, WaitsFor: info, WaitsForReading: wi.Read, Stack: stacks[wi.G]})
	for _, h := range holders {
		r.Steps = append(r.Steps, Step{Goroutine: h, Holds: info, HoldsForReading: wi.Drain, Stack: stacks[h]})
	}
	return r
}
