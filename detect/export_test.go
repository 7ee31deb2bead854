package detect

import (
	"fmt"
	"io"
	"reflect"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/core"
	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// adapt returns the core lock behind l, which must be a locksmith lock.
func adapt(l sync.Locker) core.Adapter {
	a, ok := core.Adapt(l)
	if !ok {
		panic("detect test: not a locksmith lock")
	}
	return a
}

// Blocked returns the number of goroutines registered as blocked on any
// locksmith lock.
func Blocked() int {
	n := 0
	core.Waiting(func(core.WaitInfo) { n++ })
	return n
}

// OwnerOf returns the goroutine holding l, or 0.
func OwnerOf(l sync.Locker) int64 { return adapt(l).Lock.Owner() }

// LockID returns the detector's ID for l, creating its metadata if needed.
func LockID(l sync.Locker) uint64 {
	deliverDrained(drainNestsNow())
	a := adapt(l)
	return a.Lock.Meta(a.Class).ID
}

// HasEdge reports whether the lock-order graph has the edge a -> b.
func HasEdge(a, b sync.Locker) bool {
	deliverDrained(drainNestsNow())
	ma, mb := adapt(a).Lock.PeekMeta(), adapt(b).Lock.PeekMeta()
	if ma == nil || mb == nil {
		return false
	}
	graphMu.Lock()
	defer graphMu.Unlock()
	return findEdge(nodeOf(ma), nodeOf(mb)) != nil
}

// HasPath reports whether the lock-order graph has a path a ->* b of
// edges in the order.
func HasPath(a, b sync.Locker) bool {
	deliverDrained(drainNestsNow())
	ma, mb := adapt(a).Lock.PeekMeta(), adapt(b).Lock.PeekMeta()
	if ma == nil || mb == nil {
		return false
	}
	graphMu.Lock()
	defer graphMu.Unlock()
	from, to := nodeOf(ma), nodeOf(mb)
	if from.ord == 0 || to.ord == 0 {
		return false // not in the graph
	}
	seen := map[*node]bool{from: true}
	for queue := []*node{from}; len(queue) > 0; queue = queue[1:] {
		for _, e := range queue[0].out {
			if e.to == to && e.ordered {
				return true
			}
			if e.ordered && !seen[e.to] {
				seen[e.to] = true
				queue = append(queue, e.to)
			}
		}
	}
	return false
}

// OrderConsistent checks the graph's invariants: every ordered edge goes
// up the topological order, positions are distinct, and the edge set,
// the nodes' lists and their positions agree. It returns "" or what is
// wrong.
func OrderConsistent() string {
	deliverDrained(drainNestsNow())
	graphMu.Lock()
	defer graphMu.Unlock()
	pos := map[int64]uint64{}
	n := 0
	for o, x := range byPos {
		if x.ord != o || o%ordGap == 0 || x.ord == 0 {
			return fmt.Sprintf("byPos has lock %d at %d, which is at %d", x.meta().ID, o, x.ord)
		}
	}
	for i := range graph.Len() {
		x := *graph.At(i)
		id := x.meta().ID
		if x.gi != i {
			return fmt.Sprintf("lock %d at index %d says %d", id, i, x.gi)
		}
		if x.ord == 0 {
			return fmt.Sprintf("lock %d in the graph without a position", id)
		}
		if other, dup := pos[x.ord]; dup {
			return fmt.Sprintf("locks %d and %d share position %d", id, other, x.ord)
		}
		if x.ord%ordGap != 0 && byPos[x.ord] != x {
			return fmt.Sprintf("lock %d off the grid at %d, not in byPos", id, x.ord)
		}
		pos[x.ord] = id
		for i, e := range x.out {
			n++
			if e.from != x || int(e.iout) != i || int(e.iin) >= len(e.to.in) || e.to.in[e.iin] != e {
				return fmt.Sprintf("edge %d -> %d: lists disagree (from ok %v, iout %d/%d, iin %d/%d, bypass %v, inline %v)",
					id, e.to.meta().ID, e.from == x, e.iout, i, e.iin, len(e.to.in), e.bypass, e == &e.to.first)
			}
			if findEdge(x, e.to) != e {
				return fmt.Sprintf("edge %d -> %d: not found under graphMu", id, e.to.meta().ID)
			}
			if at, ok := edgeAt(x.meta(), e.to.meta()); !ok || at != e.toAt {
				return fmt.Sprintf("edge %d -> %d: not found without graphMu (%v)", id, e.to.meta().ID, ok)
			}
			if e.to.ord == 0 || e.to.gi >= graph.Len() || *graph.At(e.to.gi) != e.to {
				return fmt.Sprintf("edge %d -> %d: target not in the graph", id, e.to.meta().ID)
			}
			if e.ordered && e.from.ord >= e.to.ord {
				return fmt.Sprintf("edge %d -> %d against the order (%d >= %d)", id, e.to.meta().ID, e.from.ord, e.to.ord)
			}
		}
	}
	if n != edgeCount() {
		return fmt.Sprintf("%d edges in lists, %d counted", n, edgeCount())
	}
	return ""
}

// Stats counts what the detector remembers.
type Stats struct {
	Nodes, Edges int // lock-order graph
	CachedEdges  int // edges found without graphMu: inline and in edgeSet
	Problems     int // distinct problems reported (bounded by the program's call sites)
	SeenLocks    int // live locks counted in a problem's tally
	HoldingGs    int // goroutines with a held-lock record (Order mode)
	ClaimedGs    int // goroutines with a gstate, holding locks or idle
	OverflowGs   int // gstates in the overflow maps
	Metas        int // locks with metadata
	Searches     int // edges added against the order
	Visited      int // locks those searches visited
}

// ReadStats returns the sizes of the detector's tables.
func ReadStats() Stats {
	deliverDrained(drainNestsNow())
	var s Stats
	graphMu.Lock()
	s.Nodes = graph.Len()
	for i := range graph.Len() {
		s.Edges += len((*graph.At(i)).out)
	}
	s.CachedEdges = edgeCount()
	s.Searches, s.Visited = searches, visited
	graphMu.Unlock()
	seen.mu.Lock()
	s.Problems = len(current().problems.problems)
	s.SeenLocks = len(seen.byID)
	seen.mu.Unlock()
	core.Metas(func(*core.Meta) { s.Metas++ })
	holding := func(g *gstate) {
		if w := g.w.Load(); w != 0 {
			s.ClaimedGs++
			if w&idleBit == 0 {
				s.HoldingGs++
			}
		}
	}
	for i := range gtable {
		holding(&gtable[i])
	}
	for i := range overflow {
		sh := &overflow[i]
		sh.mu.Lock()
		for _, g := range sh.m {
			holding(g)
			s.OverflowGs++
		}
		sh.mu.Unlock()
	}
	return s
}

// Config describes the configuration in force.
type Config struct {
	Mode        Mode
	HasReporter bool
	WaitTimeout time.Duration // the effective wait timeout, 0 for none
}

// CurrentConfig returns the configuration in force.
func CurrentConfig() Config {
	c := current()
	return Config{Mode: c.mode, HasReporter: c.reporter != nil, WaitTimeout: c.effectiveWaitTimeout()}
}

// WatchdogTimeout returns the timeout the watchdog is running with.
func WatchdogTimeout() time.Duration { return time.Duration(wd.timeout.Load()) }

// ParseStacks exposes the runtime.Stack parser.
var ParseStacks = parseStacks

// SetStderr sends what the detector prints to w until the returned
// function is called.
func SetStderr(w io.Writer) (restore func()) {
	errOut.Store(&w)
	return func() { errOut.Store(nil) }
}

// Layers returns the number of Configure calls whose options are kept
// apart from the start-up configuration.
func Layers() int {
	cfgMu.Lock()
	defer cfgMu.Unlock()
	return len(layers)
}

// ProblemCount returns the number of distinct problems reported so far.
func ProblemCount() int { return ReadStats().Problems }

// DefaultReporterName names the default reporter: "panic" or "print".
func DefaultReporterName() string {
	switch reflect.ValueOf(defaultReporter).Pointer() {
	case reflect.ValueOf(PanicReporter).Pointer():
		return "panic"
	case reflect.ValueOf(PrintReporter).Pointer():
		return "print"
	}
	return "?"
}

// WatchdogPending returns the number of watchdog timers scheduled that
// have neither fired nor been stopped.
func WatchdogPending() int { return int(wd.pending.Load()) }

// EnterLeave finds or claims the calling goroutine's record and leaves
// it, idle, as a goroutine's first lock and last unlock in Order mode do.
func EnterLeave() {
	g := gid.Get()
	s := enter(g, true)
	s.leave(g, len(s.held))
}

// Sweep runs one pass of the sweeper over the records.
func Sweep() { sweep() }

// SiteFrames returns the frames of l's first-lock site and first-wait
// site, all of them (the library's too).
func SiteFrames(l sync.Locker) (first, wait []runtime.Frame) {
	a := adapt(l)
	m := a.Lock.Meta(a.Class)
	return fpstack.Frames(m.SitePCs(), stackDepth), fpstack.Frames(m.WaitSitePCs(), stackDepth)
}

// HeldFrames returns the frames of where goroutine g acquired l, which it
// holds.
func HeldFrames(g int64, l sync.Locker) []runtime.Frame {
	a := adapt(l)
	return fpstack.Frames(heldPCs(g, a.Lock.Meta(a.Class).ID), stackDepth)
}

// Home returns the calling goroutine's home slot in the table of
// per-goroutine records, and whether its record, if it has one, is kept
// there.
func Home() (slot int, atHome bool) {
	g := gid.Get()
	h := home(g)
	return int((uintptr(unsafe.Pointer(h)) - uintptr(unsafe.Pointer(&gtable[0]))) / unsafe.Sizeof(gstate{})), lookup(g) == h
}

// HomeAway returns how many goroutines whose home is the given slot keep
// their records elsewhere.
func HomeAway(slot int) int { return int(gtable[slot].away.Load()) }

// PeekMeta returns l's metadata, or nil if it has none.
// PeekMeta returns l's Meta, or nil, once the nestings waiting for the
// drainer are drained (nest.go).
func PeekMeta(l sync.Locker) *core.Meta {
	deliverDrained(drainNestsNow())
	return adapt(l).Lock.PeekMeta()
}

// SlabSize is how many locks' detection states one allocation holds.
const SlabSize = slabSize

// LogRecheck returns the check that a test binary run by go test
// installs for its log file, giving up d from now, and how many checks
// share one reading of the clock.
func LogRecheck(file string, d time.Duration) (check func(g int64) (done bool), clockEvery int) {
	return newTestLogRecheck(file, d).check, recheckClockEvery
}

// SetDeadlockHook makes f run at the start of every deadlock report's
// making, until the returned restore is called.
func SetDeadlockHook(f func()) (restore func()) {
	testHookDeadlock = f
	return func() { testHookDeadlock = nil }
}

// WaitFromEnv exposes the reading of LOCKSMITH_WAIT_TIMEOUT.
var WaitFromEnv = waitFromEnv

// HoldDrainer keeps the drainer goroutine (nest.go) from starting, so
// that nestings wait in their slots until a park, a new edge or Dump
// drains them; restore lets it run again and drains.
func HoldDrainer() (restore func()) {
	for !drainerOn.CompareAndSwap(false, true) {
		runtime.Gosched()
	}
	return func() {
		drainerOn.Store(false)
		deliverDrained(drainNestsNow())
	}
}

// NestSlots returns how many slots of nests are in use, and how many of
// them hold a lock strongly.
func NestSlots() (inUse, dirty int) {
	lockNests()
	defer unlockNests()
	for i := range nests[:nestHi] {
		if nests[i].state != nestFree {
			inUse++
		}
	}
	return inUse, int(nestDirty.Load())
}

// RaceBuild: the test binary is built with -race.
const RaceBuild = raceBuild
