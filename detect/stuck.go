package detect

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Stuck waiters: goroutines still blocked on a locksmith lock when the
// test that started them ends (VerifyNone) or when the run ends
// (VerifyTestMain), and, for VerifyNone, goroutines of the test still in
// a Cond wait (a condvar.Cond's or a Monitor's, registered while a wait
// timeout is set: core.CondWaiting). The commonest shape is a lock held
// by a goroutine that blocks elsewhere (a channel send nobody receives, a
// WaitGroup.Wait, a sync.Once whose function waits) while others wait for
// the lock: the test returns, and they are left behind.
//
// A waiter may be about to get its lock as the test ends (its holder is
// releasing it), and a goroutine of the test may be about to start a wait
// that never ends (the test returned as it went for the lock). So a check
// looks again, with growing pauses, for up to stuckGrace, as goleak
// retries, for as long as it sees a selected wait or, for VerifyNone, a
// goroutine of the test that is running or blocked elsewhere; it counts
// the waits that begin meanwhile as well as those that were there at its
// start. It reports the waits present when the grace ends that are the
// same waits (a goroutine that got its lock and waits again is waiting
// anew) since it first saw them and have lasted at least stuckMinAge in
// its sight, looking once more for those that have not: a wait that ends
// during the grace is not stuck. A check that finds nothing of the test's
// left ends at once.

// stuckGrace bounds how long a check waits for waiters to get their locks
// before it reports them: as long as goleak's default retries take.
const stuckGrace = 500 * time.Millisecond

// stuckMinAge is how long a check must have seen a wait before it reports
// it as stuck.
const stuckMinAge = 100 * time.Millisecond

// A stuckCheck says which goroutines' waits a check reports.
type stuckCheck struct {
	// mine selects the goroutines whose waits are reported.
	mine func(g int64, snap map[int64]gInfo) bool
	// skip, if set, drops lock waits already reported.
	skip func(wi core.WaitInfo) bool
	// conds makes Cond waits count; live keeps the check looking for the
	// grace while a goroutine mine selects, other than self, is in no
	// wait of ours (it may be about to start one).
	conds, live bool
	self        int64
}

// A waitKey identifies one wait: a lock wait by its goroutine and start,
// a Cond wait by its goroutine and registration epoch.
type waitKey struct {
	g    int64
	n    uint64
	cond bool
}

func lockKey(wi core.WaitInfo) waitKey         { return waitKey{g: wi.G, n: uint64(wi.Since)} }
func condWaitKey(ci core.CondWaitInfo) waitKey { return waitKey{g: ci.G, n: ci.Epoch, cond: true} }

// stuckPoll is what one look of a check saw.
type stuckPoll struct {
	locks map[waitKey]core.WaitInfo
	conds map[waitKey]core.CondWaitInfo
	snap  map[int64]gInfo
	live  bool // a goroutine of the check's is outside our waits
}

func (c stuckCheck) poll() stuckPoll {
	p := stuckPoll{locks: map[waitKey]core.WaitInfo{}, conds: map[waitKey]core.CondWaitInfo{}}
	snap := func() map[int64]gInfo {
		if p.snap == nil {
			p.snap = allGoroutines()
		}
		return p.snap
	}
	if c.live {
		snap()
	}
	in := map[int64]bool{}
	core.Waiting(func(wi core.WaitInfo) {
		in[wi.G] = true
		if (c.skip == nil || !c.skip(wi)) && c.mine(wi.G, snap()) {
			p.locks[lockKey(wi)] = wi
		}
	})
	if c.conds {
		core.CondWaiting(func(ci core.CondWaitInfo) {
			in[ci.G] = true
			if c.mine(ci.G, snap()) {
				p.conds[condWaitKey(ci)] = ci
			}
		})
	}
	if c.live {
		for g := range p.snap {
			if g != c.self && !in[g] && c.mine(g, p.snap) {
				p.live = true
				break
			}
		}
	}
	return p
}

// stuckWaiters returns a report for every wait that c selects and that
// stays for the grace period (see above).
func stuckWaiters(c stuckCheck) []*Report {
	start := time.Now()
	firstSeen := map[waitKey]time.Time{}
	pause := time.Microsecond
	var p stuckPoll
	for {
		p = c.poll()
		if testHookStuckPoll != nil {
			testHookStuckPoll()
		}
		now := time.Now()
		for k := range p.locks {
			if _, ok := firstSeen[k]; !ok {
				firstSeen[k] = now
			}
		}
		for k := range p.conds {
			if _, ok := firstSeen[k]; !ok {
				firstSeen[k] = now
			}
		}
		if len(p.locks) == 0 && len(p.conds) == 0 && !p.live {
			return nil
		}
		if now.Sub(start) >= stuckGrace {
			break
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
	if len(p.locks) == 0 && len(p.conds) == 0 {
		return nil // goroutines of the test still run, none of them in a wait of ours
	}
	// The waits there as the grace ends, once each has been seen for
	// stuckMinAge.
	youngest := time.Duration(1<<63 - 1)
	for k := range p.locks {
		youngest = min(youngest, time.Since(firstSeen[k]))
	}
	for k := range p.conds {
		youngest = min(youngest, time.Since(firstSeen[k]))
	}
	if youngest < stuckMinAge {
		time.Sleep(stuckMinAge - youngest)
	}
	final := c.poll()
	findLeaks()
	snap := allGoroutines() // the holders' states now, and "(leaked)" where the runtime knows
	var rs []*Report
	for _, k := range sortedKeys(p.locks) {
		wi := p.locks[k]
		if _, ok := final.locks[k]; ok && still(wi) {
			rs = append(rs, stuckReport(wi, snap))
			markReported(wi)
		}
	}
	for _, k := range sortedKeys(p.conds) {
		if ci, ok := final.conds[k]; ok {
			rs = append(rs, condStuckReport(ci, time.Since(firstSeen[k]), snap))
		}
	}
	return rs
}

// testHookStuckPoll, if set (by tests), runs after each look of a check
// within its grace.
var testHookStuckPoll func()

func sortedKeys[V any](m map[waitKey]V) []waitKey {
	ks := make([]waitKey, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b waitKey) int { return cmp.Compare(a.g, b.g) })
	return ks
}

// still reports whether wi's goroutine is still in the wait wi describes.
func still(wi core.WaitInfo) bool {
	found := false
	core.Waiting(func(cur core.WaitInfo) {
		if cur.G == wi.G && cur.Lock == wi.Lock && cur.Since == wi.Since {
			found = true
		}
	})
	return found
}

// condStuckReport describes ci, a Cond wait seen for seen by the check:
// the waiter, its Cond and the Cond's lock, and how long the wait has
// gone unsignalled (the longer of seen and what the watchdog's scans saw).
func condStuckReport(ci core.CondWaitInfo, seen time.Duration, snap map[int64]gInfo) *Report {
	if d, ok := condSeenFor(ci); ok && d > seen {
		seen = d
	}
	w := snap[ci.G]
	r := &Report{Kind: StuckWaiter, Mode: CurrentMode(), Waited: seen}
	r.Steps = []Step{{Goroutine: ci.G, Cond: condInfo(ci.Tag), Stack: w.frames, State: w.state}}
	r.test = testOf(ci.G, snap)
	return r
}

// testOf returns the test function g runs, or that its nearest ancestor
// in snap that is a test's goroutine runs.
func testOf(g int64, snap map[int64]gInfo) string {
	for i := 0; g != 0 && i < 10000; i++ {
		gi, ok := snap[g]
		if !ok {
			break
		}
		if gi.test != "" {
			return gi.test
		}
		g = gi.createdBy
	}
	return ""
}

// stuckReport describes wi: the waiter and where it waits, the lock, and
// each goroutine it waits for and what that goroutine is doing now.
func stuckReport(wi core.WaitInfo, snap map[int64]gInfo) *Report {
	info := lockInfo(wi.Lock.Meta(wi.Class))
	holders := waitHolders(wi)
	r := &Report{Kind: StuckWaiter, Mode: CurrentMode(), Waited: time.Duration(core.Now() - wi.Since)}
	w := snap[wi.G]
	r.Steps = append(r.Steps, Step{Goroutine: wi.G, WaitsFor: info, WaitsForReading: wi.Read, Stack: w.frames, State: w.state})
	for _, h := range holders {
		gi, alive := snap[h]
		st := Step{Goroutine: h, Holds: info, HoldsForReading: wi.Drain}
		if alive {
			st.Stack, st.State = gi.frames, gi.state
			core.Waiting(func(o core.WaitInfo) {
				if o.G == h {
					st.WaitsFor = lockInfo(o.Lock.Meta(o.Class))
					st.WaitsForReading = o.Read
				}
			})
		}
		r.Steps = append(r.Steps, st)
	}
	r.test = testOf(wi.G, snap)
	return r
}

// leaked reports whether the runtime's leak detection marked s's
// goroutine leaked ("chan receive (leaked)").
func leaked(s Step) bool { return strings.HasSuffix(s.State, "(leaked)") }

// doing says what a holder step's goroutine is doing now, for a
// StuckWaiter report.
func doing(s Step) string {
	at := ""
	if len(s.Stack) > 0 {
		f := s.Stack[0]
		at = fmt.Sprintf(" at %s:%d", f.File, f.Line)
	}
	switch {
	case s.Stack == nil:
		return "which has exited (a lock held at exit stays held)"
	case s.WaitsFor != nil:
		return fmt.Sprintf("which is itself waiting to lock %s%s%s", s.WaitsFor, access(s.WaitsFor, s.WaitsForReading), at)
	case strings.HasPrefix(s.State, "running"), strings.HasPrefix(s.State, "runnable"), strings.HasPrefix(s.State, "syscall"):
		return "which is " + s.State + at
	}
	return "which is blocked in " + s.State + at
}

// stuckString formats a StuckWaiter report.
func (r *Report) stuckString(b *strings.Builder) {
	w := r.Steps[0]
	if w.Cond != nil {
		r.condStuckString(b)
		return
	}
	headerNaming(b, fmt.Sprintf("locksmith: goroutine %d is stuck waiting for a lock:", w.Goroutine), w.WaitsFor)
	fmt.Fprintf(b, "goroutine %d has waited %v to lock %s%s", w.Goroutine, r.Waited.Round(time.Millisecond), w.WaitsFor, access(w.WaitsFor, w.WaitsForReading))
	if len(w.Stack) > 0 {
		f := w.Stack[0]
		fmt.Fprintf(b, " at %s:%d", f.File, f.Line)
	}
	b.WriteString(",\n")
	holdersGone := len(r.Steps) > 1
	for _, h := range r.Steps[1:] {
		holdersGone = holdersGone && (h.Stack == nil || leaked(h))
	}
	switch {
	case leaked(w):
		b.WriteString("leaked for certain: the runtime's leak detection finds nothing still running that can wake it,\n")
	case holdersGone:
		b.WriteString("stuck for certain: what holds the lock has exited or is leaked, and only a holder can release it,\n")
	case leakProfile:
		b.WriteString("still waiting: the runtime's leak detection does not find it leaked,\n")
	}
	if len(r.Steps) == 1 {
		b.WriteString("which is no longer held\n")
	}
	for i, h := range r.Steps[1:] {
		lead := "held"
		if i > 0 {
			lead = "and"
		}
		fmt.Fprintf(b, "%s%s by goroutine %d, %s\n", lead, access(w.WaitsFor, h.HoldsForReading), h.Goroutine, doing(h))
	}
	b.WriteString("and the test that started it, or the run, has ended\n\n")
	for _, s := range r.Steps {
		if s.Stack != nil {
			stack(b, s)
		}
	}
}

// condStuckString formats a StuckWaiter report of a Cond wait.
func (r *Report) condStuckString(b *strings.Builder) {
	w := r.Steps[0]
	header(b, fmt.Sprintf("locksmith: goroutine %d is stuck waiting on a Cond", w.Goroutine))
	fmt.Fprintf(b, "goroutine %d is waiting on %s, not signalled for %v", w.Goroutine, w.Cond, r.Waited.Round(time.Millisecond))
	if len(w.Stack) > 0 {
		f := w.Stack[0]
		fmt.Fprintf(b, ", at %s:%d", f.File, f.Line)
	}
	b.WriteString(",\n")
	if leaked(w) {
		b.WriteString("leaked for certain: the runtime's leak detection finds nothing still running that can signal it,\n")
	}
	b.WriteString("and the test that started it has ended\n\n")
	stack(b, w)
}

// A wait reported as stuck, by its goroutine and its start: the end of the
// run does not report again what a test's end did.
type stuckWait struct{ g, since int64 }

var stuckSeen struct {
	mu sync.Mutex
	m  map[stuckWait]bool
}

func markReported(wi core.WaitInfo) {
	stuckSeen.mu.Lock()
	defer stuckSeen.mu.Unlock()
	if stuckSeen.m == nil {
		stuckSeen.m = map[stuckWait]bool{}
	}
	stuckSeen.m[stuckWait{wi.G, wi.Since}] = true
}

func reportedStuck(wi core.WaitInfo) bool {
	stuckSeen.mu.Lock()
	defer stuckSeen.mu.Unlock()
	return stuckSeen.m[stuckWait{wi.G, wi.Since}]
}
