package detect

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// The wait-timeout watchdog. There is no timer per blocked goroutine and
// no goroutine while nothing waits: one shared time.AfterFunc timer is
// armed when a goroutine parks (or the timeout is configured while some
// are parked) and re-arms itself, every timeout/4, for as long as any
// goroutine is parked on a locksmith lock. A wait is reported once, at most
// a quarter of the timeout late.
//
// Each configuration starts its own chain of scans: a chain armed under an
// older configuration (with, say, Order mode's 30 s timeout and a 7.5 s
// period) stops at its next scan, so that a shorter timeout configured
// later takes effect at once rather than after the old period.
var wd struct {
	timeout atomic.Int64  // nanoseconds; 0 is off
	gen     atomic.Uint64 // configuration generation, bumped by each install
	armed   atomic.Uint64 // the generation whose scans are scheduled, or 0
}

func watchdogConfigured(d time.Duration) {
	wd.timeout.Store(int64(d))
	wd.gen.Add(1)
	if d > 0 {
		watchdogParked()
	}
}

func watchdogParked() {
	g := wd.gen.Load()
	d := time.Duration(wd.timeout.Load())
	a := wd.armed.Load()
	if d <= 0 || a == g {
		return
	}
	if wd.armed.CompareAndSwap(a, g) {
		time.AfterFunc(period(d), func() { scan(g) })
	}
}

func period(d time.Duration) time.Duration { return max(d/4, time.Millisecond) }

func scan(g uint64) {
	if wd.gen.Load() != g {
		return // reconfigured: the new configuration runs its own scans
	}
	d := time.Duration(wd.timeout.Load())
	now := core.Now()
	var overdue []core.WaitInfo
	waiting := false
	core.Waiting(func(wi core.WaitInfo) {
		waiting = true
		if d > 0 && time.Duration(now-wi.Since) >= d && wi.MarkTimedOut() {
			overdue = append(overdue, wi)
		}
	})
	if d > 0 && waiting {
		time.AfterFunc(period(d), func() { scan(g) })
	} else {
		wd.armed.CompareAndSwap(g, 0)
		// A goroutine that parked between the scan and the disarm saw the
		// watchdog armed and did not arm it: look once more.
		recheck := false
		core.Waiting(func(core.WaitInfo) { recheck = true })
		if recheck {
			watchdogParked()
		}
	}
	// Reports go out after the next scan is scheduled, so that a reporter
	// that panics or exits its goroutine (t.FailNow) cannot stop the
	// watchdog.
	reports := make([]*Report, 0, len(overdue))
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

func deliverRecovered(r *Report) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(stderr(), "locksmith: the wait-timeout reporter panicked: %v\n(the report it was given follows)\n%s", v, r)
		}
	}()
	deliver(r)
}

func waitReport(wi core.WaitInfo, waited time.Duration) *Report {
	info := lockInfo(wi.Lock.Meta(wi.Kind))
	holder := wi.Lock.Owner()
	want := map[int64]bool{wi.G: true}
	if holder != 0 {
		want[holder] = true
	}
	stacks := goroutineStacks(want)
	r := &Report{Kind: WaitTimeout, Mode: CurrentMode(), Waited: waited}
	r.Steps = append(r.Steps, Step{Goroutine: wi.G, WaitsFor: info, Stack: stacks[wi.G]})
	if holder != 0 {
		r.Steps = append(r.Steps, Step{Goroutine: holder, Holds: info, Stack: stacks[holder]})
	}
	return r
}
