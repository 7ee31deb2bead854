package detect

import (
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
var wd struct {
	timeout atomic.Int64 // nanoseconds; 0 is off
	armed   atomic.Bool
}

func watchdogConfigured(d time.Duration) {
	wd.timeout.Store(int64(d))
	if d > 0 {
		watchdogParked()
	}
}

func watchdogParked() {
	d := time.Duration(wd.timeout.Load())
	if d <= 0 || wd.armed.Load() {
		return
	}
	if wd.armed.CompareAndSwap(false, true) {
		time.AfterFunc(period(d), scan)
	}
}

func period(d time.Duration) time.Duration { return max(d/4, time.Millisecond) }

func scan() {
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
	for _, wi := range overdue {
		deliver(waitReport(wi, time.Duration(now-wi.Since)))
	}
	if d > 0 && waiting {
		time.AfterFunc(period(d), scan)
		return
	}
	wd.armed.Store(false)
	// A goroutine that parked between the scan and the Store above saw the
	// watchdog armed and did not arm it: look once more.
	recheck := false
	core.Waiting(func(core.WaitInfo) { recheck = true })
	if recheck {
		watchdogParked()
	}
}

func waitReport(wi core.WaitInfo, waited time.Duration) *Report {
	info := lockInfo(wi.Lock.Meta(wi.Kind))
	holder := wi.Lock.Owner()
	want := map[int64]bool{wi.G: true}
	if holder != 0 {
		want[holder] = true
	}
	stacks := goroutineStacks(want)
	r := &Report{Kind: WaitTimeout, Waited: waited}
	r.Steps = append(r.Steps, Step{Goroutine: wi.G, WaitsFor: info, Stack: stacks[wi.G]})
	if holder != 0 {
		r.Steps = append(r.Steps, Step{Goroutine: holder, Holds: info, Stack: stacks[holder]})
	}
	return r
}
