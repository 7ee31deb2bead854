package detect

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/internal/core"
)

// engine is the core.Engine that this package installs at init.
type engine struct{}

func lockInfo(m *core.Meta) *LockInfo {
	return &LockInfo{ID: m.ID, Name: m.Name(), Type: "*" + m.Kind.Name, Addr: m.Addr, FirstLocked: site(m.SitePCs())}
}

// deliver hands r to the configured reporter, or prints it to stderr.
// It is never called with a detector lock held.
func deliver(r *Report) {
	if f := current().reporter; f != nil {
		f(r)
		return
	}
	fmt.Fprint(stderr(), r.String())
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

// seen remembers which cycles were reported, so each is reported once.
// Keys name lock IDs; Forget drops the keys of a collected lock.
var seen struct {
	mu    sync.Mutex
	keys  map[string]bool
	byID  map[uint64][]string
	total int
}

// cycleKey is the cycle's lock IDs rotated to start at the smallest, so
// the same cycle found from any of its goroutines has one key.
func cycleKey(kind Kind, ids []uint64) string {
	min := 0
	for i, id := range ids {
		if id < ids[min] {
			min = i
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d", kind)
	for i := range ids {
		fmt.Fprintf(&b, ":%d", ids[(min+i)%len(ids)])
	}
	return b.String()
}

// firstReport reports whether key is new, and remembers it.
func firstReport(key string, ids []uint64) bool {
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if seen.keys[key] {
		return false
	}
	if seen.keys == nil {
		seen.keys = map[string]bool{}
		seen.byID = map[uint64][]string{}
	}
	seen.keys[key] = true
	for _, id := range ids {
		seen.byID[id] = append(seen.byID[id], key)
	}
	return true
}

// Deadlock builds the report for a verified wait-for cycle.
func (engine) Deadlock(cycle []core.Step) error {
	n := len(cycle)
	infos := make([]*LockInfo, n)
	ids := make([]uint64, n)
	want := map[int64]bool{}
	for i, s := range cycle {
		infos[i] = lockInfo(s.Lock.Meta(s.Kind))
		ids[i] = infos[i].ID
		want[s.G] = true
	}
	stacks := goroutineStacks(want)
	r := &Report{Kind: Deadlock, Steps: make([]Step, n)}
	for i, s := range cycle {
		r.Steps[i] = Step{
			Goroutine: s.G,
			Holds:     infos[(i+n-1)%n], // the previous goroutine waits for what this one holds
			WaitsFor:  infos[i],
			Stack:     stacks[s.G],
		}
	}
	if firstReport(cycleKey(Deadlock, ids), ids) {
		deliver(r)
	}
	return &DeadlockError{Report: r}
}

func (engine) Forget(id uint64) {
	forgetOrder(id)
	seen.mu.Lock()
	for _, k := range seen.byID[id] {
		delete(seen.keys, k)
	}
	delete(seen.byID, id)
	seen.mu.Unlock()
}

func (engine) Parked() { watchdogParked() }

// ErrNotLocksmithLock is matched (with errors.Is) by the panic value of
// SetName given a lock that the detector cannot see.
var ErrNotLocksmithLock = errors.New("not a locksmith lock")

// SetName names l in reports, Dump and WriteDOT. l must be a *mutex.Mutex
// or a *monitor.Monitor; anything else panics with an error matching
// ErrNotLocksmithLock, since the detector cannot see it.
func SetName(l sync.Locker, name string) {
	a, ok := core.Adapt(l)
	if !ok {
		panic(core.Misuse(fmt.Sprintf("detect: SetName(%T): not a locksmith lock", l), ErrNotLocksmithLock))
	}
	a.Lock.Meta(a.Kind).SetName(name)
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
