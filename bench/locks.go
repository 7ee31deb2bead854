package bench

import (
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	deadlock "github.com/sasha-s/go-deadlock"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// Lock describes one lock under test: a lock type, the depth at which it
// is held, and for locksmith's locks the detection mode it runs in.
type Lock struct {
	// Name identifies the lock in benchmark names, tables and lockbench's
	// -locks flag: "sync.Mutex", "mutex.Mutex/detect=order",
	// "monitor.Monitor.depth8/detect=off". The detect=MODE element lets
	// benchstat group results by mode.
	Name string
	// Type is the Go type, without the pointer: "monitor.Monitor".
	Type string
	// Depth is the hold count at which the lock is measured: 1 for a first
	// entry, 2 or 8 for a Monitor's re-entry variants. See Pairs and
	// Contended for what depth means in each scenario.
	Depth int
	// Locksmith reports whether the lock is one of locksmith's, whose
	// cost depends on the detection mode.
	Locksmith bool
	// Mode is the detection mode the lock runs in when Locksmith is set.
	Mode detect.Mode

	ops *lockOps // Locks' locks
	rw  *rwOps   // RWLocks' locks
}

// lockOps holds, for one lock type, a constructor and the uncontended
// loops written against the concrete type, so that the pair timings are
// what a caller of that type pays and not an interface call more. The
// contended scenarios go through sync.Locker: one indirect call is lost in
// 100 ns of work.
type lockOps struct {
	new    func() sync.Locker
	pairs  func(l sync.Locker, n int)
	nested func(a, b sync.Locker, n int)
}

// New returns a new, unlocked lock of l's type. l must be one of Locks':
// the read-write locks of RWLocks run only the read-write scenarios.
func (l Lock) New() sync.Locker { return l.ops.new() }

// Reentrant reports whether the lock may be taken again by its holder.
func (l Lock) Reentrant() bool { return l.Type == "monitor.Monitor" || l.Type == "monitor.RWMonitor" }

// Configure puts the detection mode of l in force, with reports going to a
// counter instead of stderr (see DetectReports), and returns a function
// that restores the previous configuration. For a lock that is not
// locksmith's it does nothing.
func (l Lock) Configure() (restore func()) {
	if !l.Locksmith {
		return func() {}
	}
	return detect.Configure(detect.WithMode(l.Mode), detect.WithReporter(countDetectReport))
}

// enter takes depth holds on a lock, which must be reentrant if depth > 1.
func enter(lk sync.Locker, depth int) {
	for range depth {
		lk.Lock()
	}
}

func leave(lk sync.Locker, depth int) {
	for range depth {
		lk.Unlock()
	}
}

var (
	detectReports   atomic.Int64
	deadlockReports atomic.Int64
)

func countDetectReport(*detect.Report) { detectReports.Add(1) }

// DetectReports returns how many reports locksmith's detector has made
// while a Lock's configuration was in force. A benchmark whose locks
// deadlock or invert their order would make some; the suite's tests check
// that it makes none.
func DetectReports() int64 { return detectReports.Load() }

// GoDeadlockReports returns how many potential deadlocks go-deadlock has
// reported. The package sets go-deadlock's Opts once, at initialisation:
// the options are otherwise the defaults (30 s timeout, lock-order
// detection on), but reports go to this counter and a discarded log
// instead of stderr and os.Exit.
func GoDeadlockReports() int64 { return deadlockReports.Load() }

func init() {
	// go-deadlock's Opts is a mutable global read on every call, so it is
	// set once, here, before any of its locks exist.
	deadlock.Opts.OnPotentialDeadlock = func() { deadlockReports.Add(1) }
	deadlock.Opts.LogBuf = io.Discard
}

var modes = []detect.Mode{detect.Off, detect.Cycles, detect.Order}

// FloorName is the name of FloorLock's rows: what owner tracking costs at
// least on the machine that ran them.
const FloorName = "floor.GoidLock"

// Locks returns every lock under test, sync.Mutex first, in the order the
// tables list them: sync.Mutex, the floor lock (FloorLock), sync.RWMutex
// (write lock), mutex.Mutex and
// monitor.Monitor (first entry, then re-entry at depth 2 and 8) in each
// detection mode, go-deadlock's Mutex, the test-and-set and
// test-and-test-and-set spin locks and the channel lock.
func Locks() []Lock {
	ls := []Lock{
		{Name: "sync.Mutex", Type: "sync.Mutex", Depth: 1, ops: &syncMutexOps},
		{Name: FloorName, Type: "bench.FloorLock", Depth: 1, ops: &floorOps},
		{Name: "sync.RWMutex", Type: "sync.RWMutex", Depth: 1, ops: &syncRWMutexOps},
	}
	add := func(typ, name string, depth int, ops *lockOps) {
		for _, m := range modes {
			ls = append(ls, Lock{Name: name + "/detect=" + m.String(), Type: typ, Depth: depth, Locksmith: true, Mode: m, ops: ops})
		}
	}
	add("mutex.Mutex", "mutex.Mutex", 1, &mutexOps)
	add("monitor.Monitor", "monitor.Monitor", 1, &monitorOps)
	add("monitor.Monitor", "monitor.Monitor.depth2", 2, &monitorOps)
	add("monitor.Monitor", "monitor.Monitor.depth8", 8, &monitorOps)
	return append(ls,
		Lock{Name: "go-deadlock.Mutex", Type: "deadlock.Mutex", Depth: 1, ops: &deadlockOps},
		Lock{Name: "spin.TAS", Type: "bench.TASLock", Depth: 1, ops: &tasOps},
		Lock{Name: "spin.TTAS", Type: "bench.TTASLock", Depth: 1, ops: &ttasOps},
		Lock{Name: "chan", Type: "bench.ChanLock", Depth: 1, ops: &chanOps},
	)
}

// FirstEntry returns the locks in ls with Depth 1: the ones that make
// sense where a re-entry depth does not (nested locks, pools, queues).
func FirstEntry(ls []Lock) []Lock {
	var out []Lock
	for _, l := range ls {
		if l.Depth == 1 {
			out = append(out, l)
		}
	}
	return out
}

// Select returns the locks in ls that match any of patterns, in ls's
// order. A pattern matches a name if path.Match says so ("*/detect=off",
// "monitor.Monitor*/*") or if it is the name up to a slash
// ("mutex.Mutex" selects all three modes). A pattern that selects nothing
// is an error naming the choices.
func Select(ls []Lock, patterns []string) ([]Lock, error) {
	seen := make([]bool, len(ls))
	for _, p := range patterns {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("bad lock pattern %q: %v", p, err)
		}
		hit := false
		for i, l := range ls {
			if ok, _ := path.Match(p, l.Name); ok || strings.HasPrefix(l.Name, p+"/") {
				seen[i], hit = true, true
			}
		}
		if !hit {
			return nil, fmt.Errorf("no lock matches %q; locks are %s", p, strings.Join(Names(ls), ", "))
		}
	}
	var out []Lock
	for i, l := range ls {
		if seen[i] {
			out = append(out, l)
		}
	}
	return out, nil
}

// Names returns the names of ls.
func Names(ls []Lock) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

var syncMutexOps = lockOps{
	new: func() sync.Locker { return new(sync.Mutex) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*sync.Mutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*sync.Mutex), b.(*sync.Mutex)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var syncRWMutexOps = lockOps{
	new: func() sync.Locker { return new(sync.RWMutex) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*sync.RWMutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*sync.RWMutex), b.(*sync.RWMutex)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var mutexOps = lockOps{
	new: func() sync.Locker { return new(mutex.Mutex) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*mutex.Mutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*mutex.Mutex), b.(*mutex.Mutex)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var monitorOps = lockOps{
	new: func() sync.Locker { return new(monitor.Monitor) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*monitor.Monitor)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*monitor.Monitor), b.(*monitor.Monitor)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var deadlockOps = lockOps{
	new: func() sync.Locker { return new(deadlock.Mutex) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*deadlock.Mutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*deadlock.Mutex), b.(*deadlock.Mutex)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var tasOps = lockOps{
	new: func() sync.Locker { return new(TASLock) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*TASLock)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*TASLock), b.(*TASLock)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var ttasOps = lockOps{
	new: func() sync.Locker { return new(TTASLock) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*TTASLock)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*TTASLock), b.(*TTASLock)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var chanOps = lockOps{
	new: func() sync.Locker { return NewChanLock() },
	pairs: func(l sync.Locker, n int) {
		m := l.(*ChanLock)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*ChanLock), b.(*ChanLock)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}

var floorOps = lockOps{
	new: func() sync.Locker { return new(FloorLock) },
	pairs: func(l sync.Locker, n int) {
		m := l.(*FloorLock)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	nested: func(a, b sync.Locker, n int) {
		x, y := a.(*FloorLock), b.(*FloorLock)
		for range n {
			x.Lock()
			y.Lock()
			y.Unlock()
			x.Unlock()
		}
	},
}
