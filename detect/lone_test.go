package detect_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// loneScenarios take fresh locks in ways that go through lone records
// (lone.go): a lock first taken alone and nested under later, or with a
// lock nested under it, so that its edges are deferred to its release.
// Each returns the number of LockOrder reports the rules give.
var loneScenarios = []struct {
	name  string
	kinds string // one letter a lock: m Mutex, o Monitor, r RWMutex, R RWMonitor
	run   func(ls []diffLock) int
}{
	{"ABBA", "mm", func(ls []diffLock) int {
		lockPair(ls[0], ls[1])
		lockPair(ls[1], ls[0])
		return 1
	}},
	{"ABBA/other goroutine", "mm", func(ls []diffLock) int {
		lockPair(ls[0], ls[1])
		inGoroutine(func() { lockPair(ls[1], ls[0]) })
		return 1
	}},
	{"three-cycle", "mom", func(ls []diffLock) int {
		lockPair(ls[0], ls[1])
		lockPair(ls[1], ls[2])
		lockPair(ls[2], ls[0])
		return 1
	}},
	{"consistent", "mmm", func(ls []diffLock) int {
		lockPair(ls[0], ls[1])
		lockPair(ls[1], ls[2])
		lockPair(ls[0], ls[2])
		return 0
	}},
	{"two inner locks then inversion", "mmm", func(ls []diffLock) int {
		ls[0].Lock()
		ls[1].Lock()
		ls[1].Unlock()
		ls[2].Lock()
		ls[2].Unlock()
		ls[0].Unlock()
		lockPair(ls[2], ls[0])
		return 1
	}},
	{"outer released first", "mmm", func(ls []diffLock) int {
		ls[0].Lock()
		ls[1].Lock()
		ls[0].Unlock() // the lone lock leaves first: its edge enters the graph
		ls[2].Lock()   // nested under ls[1]
		ls[2].Unlock()
		ls[1].Unlock()
		lockPair(ls[2], ls[0])
		return 1
	}},
	{"read-read inversion, lone writes", "rr", func(ls []diffLock) int {
		a, b := ls[0].(rwLock), ls[1].(rwLock)
		a.RLock()
		b.RLock()
		b.RUnlock()
		a.RUnlock()
		b.RLock()
		a.RLock()
		a.RUnlock()
		b.RUnlock()
		// Both write-locked alone: the pending inversion is reported at
		// the last of the two first write-locks.
		a.Lock()
		a.Unlock()
		b.Lock()
		b.Unlock()
		return 1
	}},
	{"read-read inversion, lone writes first", "RR", func(ls []diffLock) int {
		a, b := ls[0].(rwLock), ls[1].(rwLock)
		a.Lock() // alone, before the locks have any state: writeSeen on the lock
		a.Unlock()
		b.Lock()
		b.Unlock()
		a.RLock()
		b.RLock()
		b.RUnlock()
		a.RUnlock()
		b.RLock()
		a.RLock()
		a.RUnlock()
		b.RUnlock()
		return 1
	}},
	{"read-read inversion, never written", "rr", func(ls []diffLock) int {
		a, b := ls[0].(rwLock), ls[1].(rwLock)
		a.RLock()
		b.RLock()
		b.RUnlock()
		a.RUnlock()
		b.RLock()
		a.RLock()
		a.RUnlock()
		b.RUnlock()
		return 0
	}},
	{"TryLock write hold counts under a nesting", "rm", func(ls []diffLock) int {
		if !ls[0].TryLock() { // alone: no writeSeen yet
			panic("TryLock of a free lock failed")
		}
		ls[1].Lock() // under the TryLock: ls[0] counts as written
		ls[1].Unlock()
		ls[0].Unlock()
		ls[1].Lock()
		ls[0].(rwLock).RLock()
		ls[0].(rwLock).RUnlock()
		ls[1].Unlock()
		return 1
	}},
	{"TryLock write hold alone does not count", "rr", func(ls []diffLock) int {
		a, b := ls[0].(rwLock), ls[1].(rwLock)
		if !ls[0].TryLock() {
			panic("TryLock of a free lock failed")
		}
		a.Unlock()
		b.Lock()
		b.Unlock()
		a.RLock()
		b.RLock()
		b.RUnlock()
		a.RUnlock()
		b.RLock()
		a.RLock()
		a.RUnlock()
		b.RUnlock()
		return 0
	}},
}

func inGoroutine(f func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f() }()
	wg.Wait()
}

func newKind(c byte) diffLock {
	switch c {
	case 'm':
		return new(mutex.Mutex)
	case 'o':
		return new(monitor.Monitor)
	case 'r':
		return new(mutex.RWMutex)
	default:
		return new(monitor.RWMonitor)
	}
}

// reportShape is what must agree between the two paths: each step's
// lock types, modes and sites (where the next lock was taken).
func reportShape(r *detect.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v:", r.Kind)
	for _, s := range r.Steps {
		at := "?"
		if len(s.Stack) > 0 {
			at = fmt.Sprintf("%s:%d", s.Stack[0].Function, s.Stack[0].Line)
		}
		fmt.Fprintf(&b, " [%s %v %v %s]", s.Holds.Type, s.HoldsForReading, s.WaitsForReading, at)
	}
	return b.String()
}

// TestLoneRecordsExact: Order mode finds the same inversions, with the
// same steps and sites, whether the locks are fresh (taken alone first,
// with their edges deferred to the lone lock's release: lone.go; a fresh
// lock nested under a lone one waits in a slot, nest.go, drained at once
// by the drainer or, in the third pass, by the next new edge) or have
// their detection state before the scenario runs (every edge added at its
// acquisition). The lone path's held-at site of a deferred edge is the
// lock's holder PC, where known: the same first frame, where both paths
// know it (each records a held site only on an acquisition the first of
// its kind for the lock, and the kinds seen first differ). (These scenarios
// lock through an interface, where the holder PC names the lock method,
// not the caller, and the site is unknown; TestOrderReportSaysWhere
// checks it for direct calls.)
func TestLoneRecordsExact(t *testing.T) {
	for _, sc := range loneScenarios {
		t.Run(sc.name, func(t *testing.T) {
			var shapes [3][]string
			var held [3][]string
			for pass, fresh := range []bool{false, true, true} {
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				ls := make([]diffLock, len(sc.kinds))
				for i := range ls {
					ls[i] = newKind(sc.kinds[i])
					if !fresh {
						detect.LockID(ls[i]) // its state made now
					}
				}
				var want int
				if pass == 2 {
					// Nestings wait in their slots (nest.go) until a new
					// edge drains them.
					restore := detect.HoldDrainer()
					want = sc.run(ls)
					restore()
				} else {
					want = sc.run(ls)
				}
				got := rec.All(detect.LockOrder)
				require.Len(t, got, want, "fresh %v:\n%s", fresh, rec)
				for _, r := range got {
					shapes[pass] = append(shapes[pass], reportShape(r))
					for _, s := range r.Steps {
						if len(s.HoldsAt) > 0 {
							held[pass] = append(held[pass], fmt.Sprintf("%s:%d", s.HoldsAt[0].Function, s.HoldsAt[0].Line))
						} else {
							held[pass] = append(held[pass], "?")
						}
					}
				}
			}
			assert.Equal(t, shapes[0], shapes[1], "the reports of the immediate and the lone paths")
			assert.Equal(t, shapes[0], shapes[2], "the reports of the immediate path and of nestings left waiting")
			for p := 1; p <= 2; p++ {
				for i := range held[p] {
					if held[0][i] != "?" && held[p][i] != "?" {
						assert.Equal(t, held[0][i], held[p][i], "pass %d, step %d's held-at site", p, i)
					}
				}
			}
		})
	}
}

// TestLoneRecordReleasedWhileOffMakesNoEdge: a lock taken alone in Order
// mode and released while Order mode is off leaves its lone record
// behind, unseen. Once Order mode is back, the record is stale: a lock
// taken next must get no edge from it, even when a later release of the
// first lock, taken again while Order mode was off, is seen; so
// consistent nesting afterwards makes no report.
func TestLoneRecordReleasedWhileOffMakesNoEdge(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	off := func() (restore func()) { return detect.Configure(detect.WithMode(detect.Off)) }
	var a, c mutex.Mutex
	c.Lock() // alone, no Meta: a lone record
	restore := off()
	c.Unlock() // unseen
	restore()
	a.Lock() // under the stale record: an edge c -> a would be false
	restore = off()
	c.Lock() // unseen
	restore()
	c.Unlock() // seen: it would add the deferred c -> a
	a.Unlock()
	a.Lock()
	c.Lock() // a -> c: the only order the program uses
	c.Unlock()
	a.Unlock()
	assert.Empty(t, rec.All(detect.LockOrder), "%s", rec)
}
