package detect

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Stuck waiters: goroutines still blocked on a locksmith lock when the
// test that started them ends (VerifyNone) or when the run ends
// (VerifyTestMain). The commonest shape is a lock held by a goroutine
// that blocks elsewhere (a channel send nobody receives, a WaitGroup.Wait,
// a sync.Once whose function waits) while others wait for the lock: the
// test returns, and they are left behind.
//
// A waiter may be about to get its lock as the test ends (its holder is
// releasing it), so a check looks again, with growing pauses, for up to
// stuckGrace, as goleak retries, and reports only the waits that are
// still there, the same waits (a goroutine that got its lock and waits
// again is waiting anew) throughout.

// stuckGrace bounds how long a check waits for waiters to get their locks
// before it reports them: as long as goleak's default retries take.
const stuckGrace = 500 * time.Millisecond

// stuckWaiters returns a report for every goroutine blocked on a locksmith
// lock that mine selects from snapshots of all goroutines, once each has
// been blocked in the same wait for the whole grace period.
func stuckWaiters(mine func(wi core.WaitInfo, snap map[int64]gInfo) bool) []*Report {
	start, since := time.Now(), core.Now()
	pause := time.Microsecond
	for {
		snap := map[int64]gInfo(nil)
		var stuck []core.WaitInfo
		core.Waiting(func(wi core.WaitInfo) {
			if snap == nil {
				snap = allGoroutines()
			}
			if wi.Since <= since && mine(wi, snap) {
				stuck = append(stuck, wi)
			}
		})
		if len(stuck) == 0 {
			return nil
		}
		if time.Since(start) >= stuckGrace {
			findLeaks()
			snap = allGoroutines() // the holders' states now, and "(leaked)" where the runtime knows
			rs := make([]*Report, 0, len(stuck))
			for _, wi := range stuck {
				if still(wi) {
					rs = append(rs, stuckReport(wi, snap))
					markReported(wi)
				}
			}
			return rs
		}
		time.Sleep(pause)
		pause = min(2*pause, 100*time.Millisecond)
	}
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

// stuckReport describes wi: the waiter and where it waits, the lock, and
// each goroutine it waits for and what that goroutine is doing now.
func stuckReport(wi core.WaitInfo, snap map[int64]gInfo) *Report {
	info := lockInfo(wi.Lock.Meta(wi.Class))
	var holders []int64
	if wi.Drain {
		for _, r := range core.RWOf(wi.Lock, wi.Class).ReaderIDs() {
			if r != wi.G {
				holders = append(holders, r)
			}
		}
	} else if o := wi.Lock.Owner(); o != 0 {
		holders = []int64{o}
	}
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
	r.test = w.test
	if r.test == "" {
		for g, i := w.createdBy, 0; g != 0 && i < 10000; i++ {
			gi, ok := snap[g]
			if !ok {
				break
			}
			if gi.test != "" {
				r.test = gi.test
				break
			}
			g = gi.createdBy
		}
	}
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
