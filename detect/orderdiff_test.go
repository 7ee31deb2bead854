package detect_test

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
)

// The differential checker of Order mode: random nestings of Mutexes,
// Monitors, RWMutexes and RWMonitors, taken for reading or writing, by
// Lock or TryLock, released in any order, with locks collected between
// phases, against a model that applies the documented rules to every
// acquisition: the edges from the nearest held lock and the try-locked or
// unwritten read holds above it; an edge against the order that closes a
// cycle through write-locked locks is reported and kept outside the
// order; one whose cycles all have a lock never write-locked is pending;
// a lock's first write-lock reports the cycles through it that it makes;
// a collected lock's paths survive as bypass edges. After every
// acquisition the reports it made and the graph (each edge ordered,
// pending or neither) must be the model's. Where the detector may choose
// (which path a report shows, so which pending edges it settles), the
// model takes the report's path after checking that it is one.

// diffLock is what the checker needs of every lock type.
type diffLock interface {
	sync.Locker
	TryLock() bool
}

// doOp takes x: 'W' Lock, 'R' RLock, 'w' TryLock, 'r' TryRLock. The
// grabN functions call it, so that each lock slot's acquisitions have a
// call site of their own (the detector tells problems apart by site).
func doOp(x diffLock, op byte) {
	switch op {
	case 'W':
		x.Lock()
	case 'R':
		x.(rwLock).RLock()
	case 'w':
		if !x.TryLock() {
			panic("TryLock of a free lock failed")
		}
	case 'r':
		if !x.(rwLock).TryRLock() {
			panic("TryRLock of a free lock failed")
		}
	}
}

func grab0(x diffLock, op byte) { doOp(x, op) }
func grab1(x diffLock, op byte) { doOp(x, op) }
func grab2(x diffLock, op byte) { doOp(x, op) }
func grab3(x diffLock, op byte) { doOp(x, op) }
func grab4(x diffLock, op byte) { doOp(x, op) }
func grab5(x diffLock, op byte) { doOp(x, op) }
func grab6(x diffLock, op byte) { doOp(x, op) }
func grab7(x diffLock, op byte) { doOp(x, op) }

var grabs = [...]func(diffLock, byte){grab0, grab1, grab2, grab3, grab4, grab5, grab6, grab7}

type edgeStatus uint8

const (
	stOrdered edgeStatus = iota
	stPending
	stOut // reported, or settled by a report: outside the order
)

func (s edgeStatus) String() string { return [...]string{"ordered", "pending", "out"}[s] }

type orderModel struct {
	edges map[[2]uint64]edgeStatus
	// reported holds every edge of every report so far.
	reported map[[2]uint64]bool
	written  map[uint64]bool
	name     map[uint64]string
}

func (m *orderModel) pendingCount() int {
	n := 0
	for _, s := range m.edges {
		if s == stPending {
			n++
		}
	}
	return n
}

// path reports whether start ->* goal (at least one edge) exists along
// edges that ok accepts, through locks that via accepts (goal exempt).
func (m *orderModel) path(start, goal uint64, ok func([2]uint64, edgeStatus) bool, via func(uint64) bool) bool {
	seen := map[uint64]bool{}
	queue := []uint64{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for e, s := range m.edges {
			if e[0] != n || !ok(e, s) {
				continue
			}
			if e[1] == goal {
				return true
			}
			if !seen[e[1]] && via(e[1]) {
				seen[e[1]] = true
				queue = append(queue, e[1])
			}
		}
	}
	return false
}

func ordered(_ [2]uint64, s edgeStatus) bool       { return s == stOrdered }
func orderedOrPend(_ [2]uint64, s edgeStatus) bool { return s != stOut }
func anyLockOK(uint64) bool                        { return true }

func (m *orderModel) writtenPath(start, goal uint64) bool {
	return m.path(start, goal, orderedOrPend, func(id uint64) bool { return m.written[id] })
}

func (m *orderModel) String() string {
	var lines []string
	for e, s := range m.edges {
		lines = append(lines, fmt.Sprintf("%s->%s %v", m.name[e[0]], m.name[e[1]], s))
	}
	slices.Sort(lines)
	var ws []string
	for id, w := range m.written {
		if w {
			ws = append(ws, m.name[id])
		}
	}
	slices.Sort(ws)
	return fmt.Sprintf("edges %v; written %v", lines, ws)
}

// takeReport checks that r is a LockOrder report of a cycle along the
// model's ordered and pending edges through write-locked locks, closed by
// from -> to (for a late report, by a pending edge, through lateID), and
// settles its pending edges. It returns what is wrong, or "".
func (m *orderModel) takeReport(r *detect.Report, from, to uint64, late bool, lateID uint64) string {
	if r.Kind != detect.LockOrder {
		return fmt.Sprintf("a %v report", r.Kind)
	}
	gotID, gotLate := detect.LateWrite(r)
	if gotLate != late || late && gotID != lateID {
		return fmt.Sprintf("late %v (lock %d), want late %v (lock %d)", gotLate, gotID, late, lateID)
	}
	n := len(r.Steps)
	var es [][2]uint64
	through := false
	for i, s := range r.Steps {
		e := [2]uint64{s.Holds.ID, s.WaitsFor.ID}
		if r.Steps[(i+1)%n].Holds.ID != e[1] {
			return fmt.Sprintf("step %d does not lead to step %d", i, (i+1)%n)
		}
		if st, ok := m.edges[e]; i == n-1 && !late {
			if ok {
				return fmt.Sprintf("closing edge %s->%s is %v already", m.name[e[0]], m.name[e[1]], st)
			}
		} else if !ok || st == stOut {
			return fmt.Sprintf("step %d: edge %s->%s is %v in the model (known %v)", i, m.name[e[0]], m.name[e[1]], st, ok)
		}
		if !m.written[e[0]] {
			return fmt.Sprintf("step %d: %s never write-locked", i, m.name[e[0]])
		}
		through = through || e[0] == lateID
		es = append(es, e)
	}
	last := es[n-1]
	if late {
		if m.edges[last] != stPending || !through {
			return fmt.Sprintf("late cycle closed by %v edge, through lock %d: %v", m.edges[last], lateID, through)
		}
	} else if last != [2]uint64{from, to} {
		return fmt.Sprintf("closed by %s->%s, want %s->%s", m.name[last[0]], m.name[last[1]], m.name[from], m.name[to])
	}
	for _, e := range es {
		m.reported[e] = true
	}
	for _, e := range es[:n-1] {
		if m.edges[e] == stPending {
			m.edges[e] = stOut
		}
	}
	if late {
		m.edges[last] = stOut
	}
	return ""
}

// forget applies the collection of the locks in dead: each region of
// dead locks connected by edges is bypassed, from each live lock with an
// ordered edge into it to each live lock it leads to along ordered edges
// through write-locked locks, where no edge is yet; then its edges go.
func (m *orderModel) forget(dead map[uint64]bool) {
	done := map[uint64]bool{}
	for d := range dead {
		if done[d] {
			continue
		}
		region := map[uint64]bool{d: true}
		queue := []uint64{d}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for e := range m.edges {
				for _, w := range []uint64{e[0], e[1]} {
					if (e[0] == x || e[1] == x) && dead[w] && !region[w] {
						region[w] = true
						queue = append(queue, w)
					}
				}
			}
		}
		for x := range region {
			done[x] = true
		}
		var adds [][2]uint64
		for in, st := range m.edges {
			p, x := in[0], in[1]
			if st != stOrdered || !region[x] || region[p] || !m.written[x] {
				continue
			}
			seen := map[uint64]bool{x: true}
			q := []uint64{x}
			for len(q) > 0 {
				n := q[0]
				q = q[1:]
				for out, st := range m.edges {
					s := out[1]
					if out[0] != n || st != stOrdered || seen[s] {
						continue
					}
					seen[s] = true
					if region[s] {
						if m.written[s] {
							q = append(q, s)
						}
						continue
					}
					if s != p {
						adds = append(adds, [2]uint64{p, s})
					}
				}
			}
		}
		for e := range m.edges {
			if region[e[0]] || region[e[1]] {
				delete(m.edges, e)
			}
		}
		for _, e := range adds {
			if _, ok := m.edges[e]; !ok {
				m.edges[e] = stOrdered
			}
		}
	}
	for d := range dead {
		delete(m.written, d)
		delete(m.name, d)
	}
}

// compare returns how the detector's graph, among the model's locks,
// differs from the model's, or "".
func (m *orderModel) compare() string {
	_, edges := detect.OrderGraph()
	got := map[[2]uint64]edgeStatus{}
	for _, e := range edges {
		if _, ok := m.name[e.From]; !ok {
			continue
		}
		s := stOut
		switch {
		case e.Ordered && e.Pending:
			return fmt.Sprintf("edge %s->%s both ordered and pending", m.name[e.From], m.name[e.To])
		case e.Ordered:
			s = stOrdered
		case e.Pending:
			s = stPending
		}
		got[[2]uint64{e.From, e.To}] = s
	}
	var diffs []string
	for e, s := range m.edges {
		if g, ok := got[e]; !ok || g != s {
			diffs = append(diffs, fmt.Sprintf("%s->%s: model %v, detector %v (present %v)", m.name[e[0]], m.name[e[1]], s, g, ok))
		}
	}
	for e, g := range got {
		if _, ok := m.edges[e]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s->%s: detector %v, not in the model", m.name[e[0]], m.name[e[1]], g))
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}

type diffHeld struct {
	slot int
	id   uint64
	op   byte
}

func isRead(op byte) bool { return op == 'R' || op == 'r' }
func isTry(op byte) bool  { return op == 'w' || op == 'r' }

var diffKinds = []string{"mutex", "monitor", "rwmutex", "rwmutex", "rwmonitor", "rwmonitor"}

// runOrderDiff runs one seeded checker; it returns the failure, or "".
func runOrderDiff(t *testing.T, seed uint64, phases, steps int) (failure string) {
	const nLocks = len(grabs)
	rng := rand.New(rand.NewPCG(seed, 0x0d1ff))
	detecttest.Configure(t, detect.WithMode(detect.Order))
	var log []string
	fail := func(format string, args ...any) string {
		return fmt.Sprintf("seed %d: %s\nafter %s", seed, fmt.Sprintf(format, args...), strings.Join(log, " "))
	}
	m := &orderModel{edges: map[[2]uint64]edgeStatus{}, reported: map[[2]uint64]bool{}, written: map[uint64]bool{}, name: map[uint64]string{}}
	locks := make([]diffLock, nLocks)
	ids := make([]uint64, nLocks)
	rw := make([]bool, nLocks)
	made := 0
	newLock := func(i int) {
		kind := diffKinds[rng.IntN(len(diffKinds))]
		name := fmt.Sprintf("L%d", made)
		made++
		locks[i] = detecttest.Named(kind, name).(diffLock)
		ids[i] = detect.LockID(locks[i])
		rw[i] = strings.HasPrefix(kind, "rw")
		m.name[ids[i]] = name
		m.written[ids[i]] = !rw[i]
	}
	for i := range locks {
		newLock(i)
	}
	var reports []*detect.Report
	record := func(r *detect.Report) { reports = append(reports, r) }
	// step takes and releases locks at random, switching to Cycles mode
	// and back at times while it holds some, and checks each acquisition
	// in Order mode against the model. recs is the model of the
	// goroutine's records of held locks: those taken in Order mode. In
	// Cycles mode only locks taken in Cycles mode, which have no record,
	// are released: a release the detector does not see leaves a stale
	// record, which the sweeper drops at a garbage collection, at a time
	// the model cannot know.
	step := func() string {
		var held, recs []diffHeld
		orderOn := true
		var restoreCycles func()
		toggle := func() {
			if orderOn {
				restoreCycles = detect.Configure(detect.WithMode(detect.Cycles))
				log = append(log, "cycles")
			} else {
				restoreCycles()
				log = append(log, "order")
			}
			orderOn = !orderOn
		}
		recorded := func(h diffHeld) bool {
			return slices.ContainsFunc(recs, func(x diffHeld) bool { return x.id == h.id })
		}
		// tryWrite: h is a TryLock of a read-write lock not yet counted
		// as written; taking another lock under it counts it.
		tryWrite := func(h diffHeld) bool { return h.op == 'w' && rw[h.slot] && !m.written[h.id] }
		passThrough := func(h diffHeld) bool { return isTry(h.op) || isRead(h.op) && !m.written[h.id] }
		release := func(k int) {
			h := held[k]
			held = slices.Delete(held, k, k+1)
			log = append(log, fmt.Sprintf("-%s", m.name[h.id]))
			if isRead(h.op) {
				locks[h.slot].(rwLock).RUnlock()
			} else {
				locks[h.slot].Unlock()
			}
			if orderOn {
				for j := len(recs) - 1; j >= 0; j-- {
					if recs[j].id == h.id {
						recs = slices.Delete(recs, j, j+1)
						break
					}
				}
			}
		}
		for range 2 + rng.IntN(6) {
			if rng.IntN(8) == 0 {
				toggle()
			}
			if rng.IntN(8) == 0 {
				detect.Dump(io.Discard)
			}
			if len(held) > 0 && (rng.IntN(4) == 0 || len(held) == nLocks) {
				k := rng.IntN(len(held))
				if !orderOn && recorded(held[k]) {
					continue
				}
				release(k)
				continue
			}
			i := rng.IntN(nLocks)
			for slices.ContainsFunc(held, func(h diffHeld) bool { return h.slot == i }) {
				i = (i + 1) % nLocks
			}
			op := "WwRr"[rng.IntN(4)]
			if !rw[i] {
				op = "WWww"[rng.IntN(4)]
			}
			id := ids[i]
			log = append(log, fmt.Sprintf("%c%s", op, m.name[id]))
			if !orderOn {
				grabs[i](locks[i], op)
				held = append(held, diffHeld{slot: i, id: id, op: op})
				continue
			}
			// Only a write that can queue counts as a write-lock; a
			// TryLock counts once its goroutine takes another lock under
			// it (see tryWrite).
			firstWrite := op == 'W' && !m.written[id]
			late := firstWrite && m.pendingCount() > 0
			m.written[id] = m.written[id] || op == 'W'

			// A problem table of its own for each acquisition, so that
			// no report of it is taken for an earlier one.
			reports = reports[:0]
			restore := detect.Configure(detect.WithReporter(record))
			grabs[i](locks[i], op)
			restore()
			got := slices.Clone(reports)

			next := func() *detect.Report {
				if len(got) == 0 {
					return nil
				}
				r := got[0]
				got = got[1:]
				return r
			}
			miss := false
			if !isTry(op) {
				for k := len(recs) - 1; k >= 0; k-- {
					h := recs[k]
					if h.id == id {
						continue
					}
					if _, ok := m.edges[[2]uint64{h.id, id}]; !ok || tryWrite(h) {
						miss = true
						break
					}
					if !passThrough(h) {
						break
					}
				}
			}
			var wrote []uint64 // TryLocked write holds counted as written now
			for k := len(recs) - 1; miss && k >= 0; k-- {
				h := recs[k]
				if h.id == id {
					continue
				}
				if tryWrite(h) {
					m.written[h.id] = true
					wrote = append(wrote, h.id)
				}
				e := [2]uint64{h.id, id}
				if _, ok := m.edges[e]; !ok {
					f, to := h.id, id
					against := m.path(to, f, ordered, anyLockOK)
					reportable := m.written[f] && m.written[to] && m.writtenPath(to, f)
					if !against && m.pendingCount() == 0 {
						reportable = false
					}
					if reportable {
						r := next()
						if r == nil {
							return fail("%s->%s closes a cycle of write-locked locks: no report\nmodel %v", m.name[f], m.name[to], m)
						}
						if msg := m.takeReport(r, f, to, false, 0); msg != "" {
							return fail("%s->%s: %s\n%v\nmodel %v", m.name[f], m.name[to], msg, r, m)
						}
					}
					switch {
					case !against:
						m.edges[e] = stOrdered
					case reportable:
						m.edges[e] = stOut
					default:
						m.edges[e] = stPending
					}
				}
				if !passThrough(h) {
					break
				}
			}
			for _, w := range wrote {
				for m.writtenPath(w, w) {
					r := next()
					if r == nil {
						return fail("write hold of %s under a new lock: a cycle through it, no report\nmodel %v", m.name[w], m)
					}
					if msg := m.takeReport(r, 0, 0, true, w); msg != "" {
						return fail("write hold of %s under a new lock: %s\n%v\nmodel %v", m.name[w], msg, r, m)
					}
				}
			}
			if late {
				for m.writtenPath(id, id) {
					r := next()
					if r == nil {
						return fail("first write-lock of %s: a cycle through it, no report\nmodel %v", m.name[id], m)
					}
					if msg := m.takeReport(r, 0, 0, true, id); msg != "" {
						return fail("first write-lock of %s: %s\n%v\nmodel %v", m.name[id], msg, r, m)
					}
				}
			}
			if r := next(); r != nil {
				return fail("unexpected report:\n%v\nmodel %v", r, m)
			}
			if d := m.compare(); d != "" {
				return fail("graph differs: %s\nmodel %v", d, m)
			}
			if d := detect.OrderConsistent(); d != "" {
				return fail("graph inconsistent: %s", d)
			}
			// No cycle through write-locked locks is left unreported, but
			// those through an edge of a report (see the top of topo.go).
			for v, w := range m.written {
				fresh := func(e [2]uint64, s edgeStatus) bool { return s != stOut && !m.reported[e] }
				if w && m.path(v, v, fresh, func(id uint64) bool { return m.written[id] }) {
					return fail("a cycle through %s of write-locked locks, none of its edges reported\nmodel %v", m.name[v], m)
				}
			}
			h := diffHeld{slot: i, id: id, op: op}
			held = append(held, h)
			recs = append(recs, h)
		}
		if !orderOn {
			toggle()
		}
		for len(held) > 0 {
			release(len(held) - 1)
		}
		if len(recs) != 0 {
			return fail("records left after every release: %v", recs)
		}
		return ""
	}
	for phase := range phases {
		for range steps {
			// Each step on a goroutine of its own, which starts with no
			// records of held locks.
			res := make(chan string, 1)
			go func() { res <- step() }()
			if msg := <-res; msg != "" {
				return msg
			}
			log = append(log, "|")
		}
		if phase == phases-1 {
			break
		}
		// Collect some of the locks; new ones take their slots.
		dead := map[uint64]bool{}
		var collected atomic.Int32
		want := int32(0)
		for i := range locks {
			if rng.IntN(3) == 0 {
				dead[ids[i]] = true
				log = append(log, "gc:"+m.name[ids[i]])
				onCollect(t, locks[i], &collected)
				want++
				locks[i] = nil
			}
		}
		m.forget(dead)
		waitForGC(t, "locks collected and forgotten", func() bool {
			if collected.Load() != want {
				return false
			}
			nodes, _ := detect.OrderGraph()
			for id := range dead {
				if nodes[id] {
					return false
				}
			}
			return true
		})
		if d := m.compare(); d != "" {
			return fail("graph differs after collection: %s\nmodel %v", d, m)
		}
		for i := range locks {
			if locks[i] == nil {
				newLock(i)
			}
		}
		runtime.GC()
	}
	return ""
}

// TestOrderDifferential runs the checker over seeded random programs: 40
// seeds (10 with -short), or as many as ORDERDIFF_SEEDS says, for a longer
// search (2,500 seeds take about 90 s without the race detector). A
// failure names its seed and the operations that led to it.
func TestOrderDifferential(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	if s := os.Getenv("ORDERDIFF_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "ORDERDIFF_SEEDS")
		seeds = n
	}
	for seed := range uint64(seeds) {
		if msg := runOrderDiff(t, seed, 3, 25); msg != "" {
			t.Fatal(msg)
		}
	}
}
