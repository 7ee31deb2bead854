package detect

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// Cond waits, watched with the wait timeout. A goroutine parked in a
// condvar.Cond wait (or a Monitor's Wait) may be what other goroutines are
// stuck behind:
//   - it holds a lock, other than the Cond's own (which its wait released),
//     that another goroutine waits for, directly or behind a writer queued
//     on a read-locked lock: the nested-monitor lockout, when the
//     signaller is among those it shuts out;
//   - its Cond's lock is wanted by goroutines that cannot get it while
//     nobody signals the Cond.
//
// Neither is certain when it forms: a Signal may come from any goroutine,
// with or without the lock, so a Cond wait ends a lockout as long as some
// goroutine that is not stuck can still signal it, and the detector
// cannot tell who will. (Inside a testing/synctest bubble, on a lock and a
// Cond made in it, it is knowable, and synctest itself reports it: such
// waits are durably blocking.) So the detector reports through the wait
// timeout: a Cond wait that has gone unsignalled for the wait timeout,
// while a goroutine has waited as long for a lock held by the Cond waiter
// (or for the Cond's lock), is reported once, as a CondWait report naming
// the Cond waiter, the Cond and its lock, what the waiter holds, and the
// goroutines stuck behind it, with their stacks. A Cond wait while
// holding a lock nobody wants, or one others want for less than the wait
// timeout, is not reported, unless its goroutine is a test's own (see
// testWaiters): a test whose goroutine waits that long on a Cond hangs.
//
// Cond waits are registered (core.CondWaitBegin) only while a wait
// timeout is configured, and carry no time stamp: the scan that first
// sees a wait records when, so a wait is reported once it has been seen
// for the wait timeout (at most a scan period, a quarter of the timeout,
// after it reached it).

// CondInfo names a Cond in a report.
type CondInfo struct {
	Addr uintptr   // the Cond's address
	Lock *LockInfo // the lock it is bound to; nil if not a locksmith lock
	Type string    // the lock's type, as %T prints it
}

// String returns the Cond's identity and its lock, for example
// `Cond 0xc000012340 on *mutex.Mutex 0xc000012300`.
func (c CondInfo) String() string {
	if c.Lock != nil {
		return fmt.Sprintf("Cond %#x on %s", c.Addr, c.Lock)
	}
	return fmt.Sprintf("Cond %#x on a %s", c.Addr, c.Type)
}

func condInfo(t *core.CondTag) *CondInfo {
	ci := &CondInfo{Addr: t.Cond, Type: t.Type}
	if t.Lock != nil {
		ci.Lock = lockInfo(t.Lock)
	}
	return ci
}

// condWatchConfigured turns the registration of Cond waits on while a
// wait timeout is configured.
func condWatchConfigured(d time.Duration) { core.SetCondWatch(d > 0) }

// condSeen records when a scan first saw each Cond wait, and whether it
// has been reported; a scan drops the waits that have ended.
var condSeen struct {
	mu sync.Mutex
	m  map[condKey]*condMark
}

type condKey struct {
	g     int64
	epoch uint64
}

type condMark struct {
	first    int64 // on the Now clock
	reported bool
	// worker is set once a scan has found the waiter, overdue, to be no
	// test's own goroutine (see testWaiters): it is not looked at again.
	worker bool
}

// condWaitsSeen returns every Cond wait registered now, by goroutine, with
// how long the scans have seen it, and forgets the waits that ended.
func condWaitsSeen(now int64) map[int64]seenCond {
	cur := map[int64]seenCond{}
	core.CondWaiting(func(ci core.CondWaitInfo) { cur[ci.G] = seenCond{info: ci} })
	condSeen.mu.Lock()
	defer condSeen.mu.Unlock()
	old := condSeen.m
	condSeen.m = make(map[condKey]*condMark, len(cur))
	for g, sc := range cur {
		k := condKey{g, sc.info.Epoch}
		m := old[k]
		if m == nil {
			m = &condMark{first: now}
		}
		condSeen.m[k] = m
		sc.mark = m
		sc.seen = time.Duration(now - m.first)
		cur[g] = sc
	}
	return cur
}

// condSeenFor returns how long the watchdog's scans have seen ci's wait,
// if they have.
func condSeenFor(ci core.CondWaitInfo) (time.Duration, bool) {
	condSeen.mu.Lock()
	defer condSeen.mu.Unlock()
	m := condSeen.m[condKey{ci.G, ci.Epoch}]
	if m == nil {
		return 0, false
	}
	return time.Duration(core.Now() - m.first), true
}

type seenCond struct {
	info core.CondWaitInfo
	mark *condMark // guarded by condSeen.mu
	seen time.Duration
}

// A condFinding is a chain of overdue lock waits stuck behind a Cond
// waiter: chain[0] waits for a lock the Cond waiter holds (holds), or, with
// own, for the lock of the Cond it waits on; each later wait waits for the
// goroutine of the one before it (a reader queued behind a writer that
// waits for readers to leave).
type condFinding struct {
	chain []core.WaitInfo
	own   bool
}

// condScan makes the CondWait reports of one watchdog scan: d is the wait
// timeout, now the scan's time. The lock waits it reports are marked as
// reported, so that the scan does not report them again as WaitTimeout;
// those stuck behind a Cond wait that has not yet been seen for the wait
// timeout are returned in wait, for the scan to leave for a later one, so
// that one CondWait report names both waits.
func condScan(now int64, d time.Duration) (reports []*Report, wait map[int64]bool) {
	conds := condWaitsSeen(now)
	if len(conds) == 0 {
		return nil, nil
	}
	wait = map[int64]bool{}
	waits := map[int64]core.WaitInfo{}
	core.Waiting(func(wi core.WaitInfo) { waits[wi.G] = wi })
	found := map[int64][]condFinding{}
	for _, wi := range waits {
		if time.Duration(now-wi.Since) < d {
			continue
		}
		// A lockout: follow the goroutines wi waits for, through writers
		// that wait for readers to leave, to a Cond waiter.
		path := []core.WaitInfo{wi}
		seen := map[int64]bool{wi.G: true}
		for len(path) <= 8 {
			cur := path[0]
			var next *core.WaitInfo
			for _, h := range waitHolders(cur) {
				if seen[h] {
					continue
				}
				seen[h] = true
				if sc, ok := conds[h]; ok && sc.seen >= d {
					found[h] = append(found[h], condFinding{chain: slices.Clone(path)})
				} else if ok {
					for _, p := range path {
						wait[p.G] = true
					}
				} else if hw, ok := waits[h]; ok && next == nil {
					next = &hw
				}
			}
			if next == nil {
				break
			}
			path = append([]core.WaitInfo{*next}, path...)
		}
		// The Cond's own lock.
		if m := wi.Lock.PeekMeta(); m != nil {
			for g, sc := range conds {
				if g != wi.G && sc.seen >= d && sc.info.Tag.Lock == m {
					found[g] = append(found[g], condFinding{chain: []core.WaitInfo{wi}, own: true})
				}
			}
		}
	}
	for _, g := range testWaiters(conds, found, d) {
		found[g] = nil
	}
	gs := make([]int64, 0, len(found))
	for g := range found {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	for _, g := range gs {
		sc := conds[g]
		condSeen.mu.Lock()
		first := !sc.mark.reported
		sc.mark.reported = true
		condSeen.mu.Unlock()
		if !first {
			continue
		}
		r, locks, goroutines := condReport(sc, found[g])
		if note(r, locks, goroutines) {
			reports = append(reports, r)
		}
	}
	return reports, wait
}

// testWaiters returns the Cond waiters of conds, unsignalled for the wait
// timeout d and not in found, not reported yet, that are a test's own
// goroutine: one that called VerifyNone, or one that runs
// testing.tRunner (its outermost frame). Such a wait is the test's own
// hang (a Cond nobody signals: the test never ends), whoever waits for
// its locks. A worker goroutine idle in a Cond wait for as long is not
// one, and is looked at once per wait: the stacks are read only when an
// overdue wait has not been looked at.
func testWaiters(conds map[int64]seenCond, found map[int64][]condFinding, d time.Duration) []int64 {
	var todo []int64
	condSeen.mu.Lock()
	for g, sc := range conds {
		if _, ok := found[g]; !ok && sc.seen >= d && !sc.mark.reported && !sc.mark.worker {
			todo = append(todo, g)
		}
	}
	condSeen.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	var tests []int64
	var snap map[int64]gInfo
	for _, g := range todo {
		rec.mu.Lock()
		registered := rec.scopes[g] != nil
		rec.mu.Unlock()
		if !registered {
			if snap == nil {
				snap = allGoroutines()
			}
			registered = snap[g].test != ""
		}
		if registered {
			tests = append(tests, g)
			continue
		}
		condSeen.mu.Lock()
		conds[g].mark.worker = true
		condSeen.mu.Unlock()
	}
	return tests
}

// waitHolders returns the goroutines wi waits for: the owner, or, for a
// writer waiting for readers to leave, the readers.
func waitHolders(wi core.WaitInfo) []int64 {
	if wi.Drain {
		var rs []int64
		for _, r := range core.RWOf(wi.Lock, wi.Class).ReaderIDs() {
			if r != wi.G {
				rs = append(rs, r)
			}
		}
		slices.Sort(rs)
		return rs
	}
	if o := wi.Lock.Owner(); o != 0 {
		return []int64{o}
	}
	return nil
}

// condReport builds the CondWait report for the Cond waiter sc and the
// lock waits stuck behind it (marking those as reported), with the locks
// and goroutines involved, for note.
func condReport(sc seenCond, fs []condFinding) (r *Report, locks []uint64, goroutines []int64) {
	slices.SortFunc(fs, func(a, b condFinding) int { return int(a.chain[len(a.chain)-1].G - b.chain[len(b.chain)-1].G) })
	w := Step{Goroutine: sc.info.G, Cond: condInfo(sc.info.Tag)}
	steps := []Step{w}
	in := map[int64]bool{w.Goroutine: true}
	var holder *Step // of the Cond's own lock
	for _, f := range fs {
		c := f.chain[0]
		li := lockInfo(c.Lock.Meta(c.Class))
		if !f.own && steps[0].Holds == nil {
			steps[0].Holds, steps[0].HoldsForReading = li, c.Drain
		}
		if f.own && holder == nil {
			if o := c.Lock.Owner(); o != 0 && !in[o] {
				holder = &Step{Goroutine: o, Holds: li}
			}
		}
		for _, wi := range f.chain {
			if in[wi.G] {
				continue
			}
			in[wi.G] = true
			wi.MarkTimedOut()
			steps = append(steps, Step{Goroutine: wi.G, WaitsFor: lockInfo(wi.Lock.Meta(wi.Class)),
				WaitsForReading: wi.Read, Queued: wi.Drain})
			locks = append(locks, wi.Lock.Meta(wi.Class).ID)
		}
	}
	if holder != nil {
		in[holder.Goroutine] = true
		steps = append(steps, *holder)
	}
	stacks := goroutineStacks(in)
	for i := range steps {
		steps[i].Stack = stacks[steps[i].Goroutine]
		goroutines = append(goroutines, steps[i].Goroutine)
	}
	return &Report{Kind: CondWait, Mode: CurrentMode(), Steps: steps, Waited: sc.seen}, locks, goroutines
}

// condString formats a CondWait report (see Report.String).
func (r *Report) condString(b *strings.Builder) {
	w := r.Steps[0]
	waited := r.Waited.Round(time.Millisecond)
	if len(r.Steps) == 1 {
		header(b, fmt.Sprintf("locksmith: goroutine %d waits on a Cond, unsignalled for %v, in a test's own goroutine", w.Goroutine, waited))
		fmt.Fprintf(b, "goroutine %d has waited at least %v on %s, not signalled,\n", w.Goroutine, waited, w.Cond)
		b.WriteString("and it is a test's goroutine: the test cannot end until the Cond is signalled\n\n")
		stack(b, w)
		r.seenLine(b)
		return
	}
	if w.Holds != nil {
		headerNaming(b, fmt.Sprintf("locksmith: goroutine %d waits on a Cond, unsignalled for %v, holding a lock others wait for:", w.Goroutine, waited), w.Holds)
	} else {
		headerNaming(b, fmt.Sprintf("locksmith: goroutine %d waits on a Cond, unsignalled for %v, while others wait for its lock:", w.Goroutine, waited), condLock(w))
	}
	fmt.Fprintf(b, "goroutine %d has waited at least %v on %s, not signalled,\n", w.Goroutine, waited, w.Cond)
	if w.Holds != nil {
		fmt.Fprintf(b, "and holds %s%s (the wait released only the Cond's lock)\n", w.Holds, access(w.Holds, w.HoldsForReading))
	}
	for _, s := range r.Steps[1:] {
		switch {
		case s.WaitsFor == nil:
			fmt.Fprintf(b, "goroutine %d holds %s\n", s.Goroutine, s.Holds)
		case s.Queued:
			fmt.Fprintf(b, "goroutine %d waits to lock %s for writing, queued ahead of new readers, for its readers to leave\n", s.Goroutine, s.WaitsFor)
		default:
			fmt.Fprintf(b, "goroutine %d waits to lock %s%s\n", s.Goroutine, s.WaitsFor, access(s.WaitsFor, s.WaitsForReading))
		}
	}
	if w.Holds != nil {
		b.WriteString("(a nested-monitor lockout if the goroutine that would signal the Cond is among those waiting)\n")
	}
	b.WriteString("\n")
	for _, s := range r.Steps {
		stack(b, s)
	}
	r.seenLine(b)
}
