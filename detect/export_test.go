package detect

import (
	"io"
	"reflect"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// adapt returns the core lock behind l, which must be a locksmith lock.
func adapt(l sync.Locker) core.Adapter {
	a, ok := core.Adapt(l)
	if !ok {
		panic("detect test: not a locksmith lock")
	}
	return a
}

// BlockedOn returns the IDs of the goroutines registered as blocked on l,
// so that tests can wait for a goroutine to park without sleeping.
func BlockedOn(l sync.Locker) []int64 {
	cl := adapt(l).Lock
	var gs []int64
	core.Waiting(func(wi core.WaitInfo) {
		if wi.Lock == cl {
			gs = append(gs, wi.G)
		}
	})
	return gs
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
	a := adapt(l)
	return a.Lock.Meta(a.Kind).ID
}

// HasEdge reports whether the lock-order graph has the edge a -> b.
func HasEdge(a, b sync.Locker) bool {
	ma, mb := adapt(a).Lock.PeekMeta(), adapt(b).Lock.PeekMeta()
	if ma == nil || mb == nil {
		return false
	}
	graphMu.Lock()
	defer graphMu.Unlock()
	n := graph[ma.ID]
	return n != nil && n.out[mb.ID] != nil
}

// Stats counts what the detector remembers.
type Stats struct {
	Nodes, Edges int // lock-order graph
	Chains       int // chainMembers entries
	CachedChains int // chainCache entries
	Problems     int // distinct problems reported (bounded by the program's call sites)
	SeenLocks    int // live locks counted in a problem's tally
	HoldingGs    int // goroutines with a held-lock record (Order mode)
}

// ReadStats returns the sizes of the detector's tables.
func ReadStats() Stats {
	var s Stats
	graphMu.Lock()
	s.Nodes = len(graph)
	for _, n := range graph {
		s.Edges += len(n.out)
	}
	s.Chains = len(chainMembers)
	graphMu.Unlock()
	s.CachedChains = chainCount()
	seen.mu.Lock()
	s.Problems = len(current().problems.problems)
	s.SeenLocks = len(seen.byID)
	seen.mu.Unlock()
	for i := range gtable {
		if gs := gtable[i].Load(); gs != nil && gs.g.Load() != 0 {
			s.HoldingGs++
		}
	}
	s.HoldingGs += int(overflow.n.Load())
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
