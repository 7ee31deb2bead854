package detect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// engine is the core.Engine that this package installs at init, as a
// pointer: the Order-mode hooks, called on every acquisition and release,
// have pointer receivers, so that core's interface call reaches them
// directly rather than through the wrapper that a value method needs (a
// call more per lock operation; under the race detector, a function entry
// and exit more).
type engine struct{}

func lockInfo(m *core.Meta) *LockInfo {
	li := &LockInfo{ID: m.ID, Name: m.Name(), Type: "*" + m.Class.Name, Addr: m.Addr,
		FirstLocked: site(m.SitePCs()), FirstWaited: site(m.WaitSitePCs()), ReadWrite: m.Class.RW}
	l := m.Lock()
	if l != nil && li.FirstLocked == "" && li.FirstWaited == "" && l.Owner() != 0 {
		li.LockedAt = core.PCSite(l.HolderPC())
	}
	if m.Class.RW && l != nil {
		li.Readers = core.RWOf(l, m.Class).Readers()
	}
	return li
}

// deliver hands r to the configured reporter, or to the default one.
// It is never called with a detector lock held.
//
// The default reporters print a refusal that its caller handles (a
// Deadlock report with BackedOff: a LockContext or LockTimeout returned
// without the lock) as one line: the caller backs off as designed, and
// nothing is blocked. A reporter installed with WithReporter gets the
// whole report, as does a Lock's refusal, which panics.
func deliver(r *Report) {
	f := current().reporter
	if f == nil {
		if recorded(r) {
			return
		}
		if r.Kind == Deadlock && r.BackedOff {
			fmt.Fprintln(stderr(), r.Line())
			return
		}
		f = defaultReporter
	}
	f(r)
}

// errOut is where reports and reporter failures are printed: os.Stderr,
// unless a test of this package swaps it.
var errOut atomic.Pointer[io.Writer]

func stderr() io.Writer {
	if w := errOut.Load(); w != nil {
		return *w
	}
	return os.Stderr
}

// deliverAll delivers rs in order. If a reporter panics (PanicReporter
// does, for a LockOrder report) or ends its goroutine, the reports after
// it are printed to stderr on the way out, since each was counted as made
// and will not be made again.
func deliverAll(rs []*Report) {
	done := 0
	defer func() {
		for i := done + 1; i < len(rs); i++ {
			PrintReporter(rs[i])
		}
	}()
	for _, r := range rs {
		deliver(r)
		done++
	}
}

// The detector reports each problem once. A problem is identified by its
// kind and the call sites of its steps (see problemKey), rotated, for a
// cycle, to a canonical starting point. So one inversion made over any
// number of lock instances, reached from any number of callers, or one
// deadlock that recurs in a retry loop, is one report, and its tally
// counts the occurrences, lock instances and goroutines.
//
// Rejected alternative: keys made of lock IDs (each cycle of lock
// instances once), which would make a report per pair of objects: a
// hundred for one inversion made over a hundred objects.
//
// The problems are remembered per reporter: each configuration made with
// WithReporter starts a table of its own (and a restored configuration
// brings its table back), so that a test that installs its own reporter
// hears of every problem its code makes, whatever earlier tests reported.
var seen struct {
	mu   sync.Mutex
	byID map[uint64][]*tally // the tallies that hold a live lock's ID, for Forget
}

// problemTable is the problems reported to one reporter configuration;
// guarded by seen.mu.
type problemTable struct {
	problems map[string]*tally
}

// maxTallyGoroutines bounds the goroutine IDs a tally keeps: goroutines
// have no exit hook to forget them by.
const maxTallyGoroutines = 1000

// tally counts the occurrences of one problem; guarded by seen.mu.
type tally struct {
	first      *Report
	times      int
	nlocks     int
	locks      map[uint64]bool // the live locks among those counted
	goroutines map[int64]bool
}

func (t *tally) read() Seen {
	seen.mu.Lock()
	defer seen.mu.Unlock()
	return Seen{Times: t.times, Locks: t.nlocks, Goroutines: len(t.goroutines)}
}

// stepSite is the code site of a step for a wait timeout (and the other
// reports that are no cycle): its first user frame, and the function
// that called it. The caller is part of the site so that locks taken
// through one wrapper (func (x *T) lock() { x.mu.Lock() }) by unrelated
// code are not one problem; it is named without its line or its closure
// suffix, so that the same code path run from a loop and from the
// goroutines it starts is one problem.
//
// Rejected alternative: the whole stack. Every goroutine's outer frames
// differ, so one inversion over a hundred objects made from a hundred
// goroutines would be a hundred reports again.
func stepSite(s Step) string {
	if len(s.Stack) == 0 {
		return "?"
	}
	f := s.Stack[0]
	site := f.Function + " " + f.File + ":" + strconv.Itoa(f.Line)
	if len(s.Stack) > 1 {
		site += " < " + trimClosure(s.Stack[1].Function)
	}
	return site
}

// cycleSites returns the sites of the steps of a cycle (a Deadlock or a
// LockOrder report) for its key: for each step, where it takes the lock
// the next step holds (a LockOrder step's edge, a Deadlock step's wait),
// by the innermost user frame of that stack (function and file:line)
// while those frames are in different functions, so that the same
// inversion reached from any callers of the methods that make it (two
// tests calling Stream.Read, which locks a then b, while Stream.Write
// locks b then a) is one problem. When two steps' innermost frames are
// in one function, as when the steps take their locks in one wrapper
// (lockBoth(x, y), called as lockBoth(a, b) in one function and
// lockBoth(b, a) in another, or a helper that locks its argument), each
// site also names the function that called that frame (stepSite): the
// inversion is then named by the functions that call the wrapper, and
// another pair of locks passed to it by other functions is another
// problem. The caller is named without its line or closure suffix, so
// that the same calls made from a loop and from the goroutines it starts
// (transfer(a, b) in the loop, transfer(b, a) in it or in a goroutine it
// starts) are one problem, as is any other inversion made by calls of
// the wrapper from those functions.
//
// Rejected alternatives: the innermost frame and its caller's function
// for every cycle, which made an inversion reached from two tests two
// problems; more callers, or their lines, which split one inversion made
// from a loop and from its goroutines, whose stacks differ there; and
// lock IDs (see above).
func cycleSites(steps []Step) []string {
	sites := make([]string, len(steps))
	fns := make([]string, len(steps))
	for i, s := range steps {
		sites[i], fns[i] = "?", "?"
		if len(s.Stack) > 0 {
			f := s.Stack[0]
			sites[i], fns[i] = f.Function+" "+f.File+":"+strconv.Itoa(f.Line), f.Function
		}
	}
	if distinct(fns) {
		return sites
	}
	for i, s := range steps {
		sites[i] = stepSite(s)
	}
	return sites
}

// distinct reports whether no two of sites are equal.
func distinct(sites []string) bool {
	for i := range sites {
		for j := i + 1; j < len(sites); j++ {
			if sites[i] == sites[j] {
				return false
			}
		}
	}
	return true
}

// trimClosure drops the suffixes the compiler gives function literals
// (".func1", ".func2.1", ...) from a function's name.
func trimClosure(fn string) string {
	for {
		i := strings.LastIndex(fn, ".")
		if i < 0 {
			return fn
		}
		last := fn[i+1:]
		if !strings.HasPrefix(last, "func") && strings.Trim(last, "0123456789") != "" {
			return fn
		}
		if strings.HasPrefix(last, "func") && strings.Trim(last[len("func"):], "0123456789") != "" {
			return fn
		}
		fn = fn[:i]
	}
}

// problemKey returns the key of the problem r describes: its kind and
// its steps' sites. A Deadlock's or LockOrder report's steps make a
// cycle, keyed by where each of its locks is taken (cycleSites), from the
// rotation that sorts first, since a cycle found from any of its steps is
// the same cycle. A wait-timeout report's key is its waiter's site alone
// (stepSite): the other steps are the holders (or a draining writer's
// readers, in slot order) as they are at the scan, at whatever line each
// happens to be, so that a holder running in a loop, or readers that
// took other slots, would make each wait of one hang a problem of its
// own. Any other report is keyed by every step's stepSite.
func problemKey(r *Report) string {
	steps := r.Steps
	if r.Kind == WaitTimeout && len(steps) > 1 {
		steps = steps[:1]
	}
	var sites []string
	switch r.Kind {
	case Deadlock, LockOrder:
		sites = cycleSites(steps)
	default:
		sites = make([]string, len(steps))
		for i, s := range steps {
			sites[i] = stepSite(s)
		}
	}
	if r.Kind != WaitTimeout && len(sites) > 1 {
		// A cycle found from any of its steps is the same cycle: start at
		// the rotation that sorts first.
		best := sites
		for i := 1; i < len(sites); i++ {
			rot := append(append([]string(nil), sites[i:]...), sites[:i]...)
			if slices.Compare(rot, best) < 0 {
				best = rot
			}
		}
		sites = best
	}
	return r.Kind.String() + "\x00" + strings.Join(sites, "\x00")
}

// note counts an occurrence of the problem r describes, with the locks and
// goroutines involved, attaches the problem's tally to r, and reports
// whether this is the first occurrence, the one to deliver.
//
// While the recorder is on (recorder.go), the problem is also new to a
// test that has not had it yet: each test that makes it fails.
func note(r *Report, locks []uint64, goroutines []int64) (first bool) {
	key := problemKey(r)
	var claimed *scope
	if recOn.Load() {
		claimed = claimTest(r)
	}
	defer func() {
		if !first && claimed != nil {
			first = claimed.fresh(key)
		}
	}()
	tab := current().problems
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if tab.problems == nil {
		tab.problems = map[string]*tally{}
	}
	if seen.byID == nil {
		seen.byID = map[uint64][]*tally{}
	}
	t := tab.problems[key]
	if t == nil {
		t = &tally{first: r, locks: map[uint64]bool{}, goroutines: map[int64]bool{}}
		tab.problems[key] = t
		first = true
	}
	t.times++
	for _, id := range locks {
		if !t.locks[id] {
			t.locks[id] = true
			t.nlocks++
			seen.byID[id] = append(seen.byID[id], t)
		}
	}
	for _, g := range goroutines {
		if len(t.goroutines) < maxTallyGoroutines {
			t.goroutines[g] = true
		}
	}
	r.tally = t
	return first
}

// problems returns the first report of every problem reported to the
// reporter in force, in no order.
func problems() []*Report {
	tab := current().problems
	seen.mu.Lock()
	defer seen.mu.Unlock()
	out := make([]*Report, 0, len(tab.problems))
	for _, t := range tab.problems {
		out = append(out, t.first)
	}
	return out
}

// testHookDeadlock, if set (by tests), runs when engine.Deadlock is
// called, before it builds the report.
var testHookDeadlock func()

// Stacks takes the stacks of the goroutines of a cycle that core's first
// walk found; the second walk then proves them taken while each goroutine
// waited where the cycle says (see core.checkCycle).
func (engine) Stacks(cycle []core.Hop) any {
	want := make(map[int64]bool, len(cycle))
	for _, s := range cycle {
		want[s.G] = true
	}
	return goroutineStacks(want)
}

// Deadlock builds the report for a verified wait-for cycle.
func (engine) Deadlock(c *core.Cycle) error {
	if testHookDeadlock != nil {
		testHookDeadlock()
	}
	cycle := c.Hops
	n := len(cycle)
	infos := make([]*LockInfo, n)
	ids := make([]uint64, n)
	gs := make([]int64, n)
	for i, s := range cycle {
		infos[i] = lockInfo(s.Lock.Meta(s.Class))
		ids[i] = infos[i].ID
		gs[i] = s.G
	}
	stacks, _ := c.Stacks.(map[int64][]Frame)
	mode := CurrentMode()
	r := &Report{Kind: Deadlock, Mode: mode, Steps: make([]Step, n), BackedOff: c.BacksOff}
	for i, s := range cycle {
		holds := infos[(i+n-1)%n] // the previous goroutine waits for what this one holds
		prev := cycle[(i+n-1)%n]
		r.Steps[i] = Step{
			Goroutine:       s.G,
			Holds:           holds,
			HoldsForReading: prev.HolderRead,
			WaitsFor:        infos[i],
			WaitsForReading: s.Read,
			Queued:          s.HolderRead,
			Stack:           stacks[s.G],
		}
		if mode == Order {
			// Every goroutine of the cycle but the caller is parked for
			// good (until the caller gives up), and published its records
			// before it registered as blocked: they are safe to read.
			r.Steps[i].HoldsAt = symbolise(heldPCs(s.G, holds.ID))
		}
		if r.Steps[i].HoldsAt == nil {
			// The same holds for the PC the lock keeps of the holder's
			// acquisition, written when it took the lock: the writer's,
			// or its reader slot's.
			r.Steps[i].HoldsAt = heldFrames(prev.Lock, prev.Class, s.G, prev.HolderRead)
		}
	}
	if note(r, ids, gs) {
		deliver(r)
	}
	return &DeadlockError{Report: r}
}

func (engine) Forget(ms []*core.Meta) {
	forgetOrder(ms)
	seen.mu.Lock()
	for _, m := range ms {
		id := m.ID
		for _, t := range seen.byID[id] {
			delete(t.locks, id) // counted already: nlocks stays
		}
		delete(seen.byID, id)
	}
	seen.mu.Unlock()
}

// Parked drains the nestings waiting in nests (nest.go): a lock a slot
// holds strongly would hide its waiter from Go's goroutine leak profile.
func (engine) Parked() {
	deliverDrained(drainNestsNow())
	watchdogParked()
}

// ErrNotLocksmithLock is matched (with errors.Is) by the panic value of
// SetName given a lock that the detector cannot see.
var ErrNotLocksmithLock = errors.New("not a locksmith lock")

// SetName names l in reports, Dump and WriteDOT. l must be a
// *mutex.Mutex, *monitor.Monitor, *mutex.RWMutex or *monitor.RWMonitor
// (or the RLocker of one of the last two, which names the lock itself);
// anything else panics with an error matching ErrNotLocksmithLock, since
// the detector cannot see it.
func SetName(l sync.Locker, name string) {
	a, ok := core.Adapt(l)
	if !ok {
		panic(core.Misuse(fmt.Sprintf("detect: SetName(%T): not a locksmith lock", l), ErrNotLocksmithLock))
	}
	a.Lock.Meta(a.Class).SetName(name)
}

// sortedGoroutines returns the keys of m in order.
func sortedGoroutines[V any](m map[int64]V) []int64 {
	gs := make([]int64, 0, len(m))
	for g := range m {
		gs = append(gs, g)
	}
	slices.Sort(gs)
	return gs
}
