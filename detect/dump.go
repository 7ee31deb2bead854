package detect

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

type blocked struct {
	g      int64
	lock   *LockInfo
	owner  int64
	waited time.Duration
	// For a read-write lock: read says the goroutine waits for a read
	// lock; drain that it holds the writer lock and waits for readers,
	// which are then the holders it waits for.
	read    bool
	drain   bool
	readers []int64
}

// holders returns the goroutines that b waits for.
func (b blocked) holders() []int64 {
	if b.drain {
		return b.readers
	}
	if b.owner != 0 {
		return []int64{b.owner}
	}
	return nil
}

func blockedNow() []blocked {
	now := core.Now()
	var out []blocked
	core.Waiting(func(wi core.WaitInfo) {
		b := blocked{
			g:      wi.G,
			lock:   lockInfo(wi.Lock.Meta(wi.Class)),
			owner:  wi.Lock.Owner(),
			waited: time.Duration(now - wi.Since),
			read:   wi.Read,
			drain:  wi.Drain,
		}
		if wi.Drain {
			for _, r := range core.RWOf(wi.Lock, wi.Class).ReaderIDs() {
				if r != wi.G {
					b.readers = append(b.readers, r)
				}
			}
			slices.Sort(b.readers)
		}
		out = append(out, b)
	})
	slices.SortFunc(out, func(a, b blocked) int { return int(a.g - b.g) })
	return out
}

type holding struct {
	lock  *LockInfo
	count int  // write holds (1 for a non-reentrant lock); 0 for a read hold
	read  bool // a read hold of a read-write lock
	alone bool // a lock held alone, without metadata (lone.go): count unknown
}

// heldNow returns every lock with detector metadata that is held now,
// by holder, ordered by lock ID. Locks get metadata when they are nested
// with another in Order mode (or are named, or are part of a report); Dump
// adds the locks held alone from loneHeldNow. The per-goroutine
// records of Order mode belong to their goroutines and are not read here.
func heldNow() map[int64][]holding {
	out := map[int64][]holding{}
	core.Metas(func(m *core.Meta) {
		l := m.Lock()
		if l == nil {
			return
		}
		if m.Class.RW {
			for _, r := range core.RWOf(l, m.Class).ReaderIDs() {
				out[r] = append(out[r], holding{lock: lockInfo(m), read: true})
			}
		}
		g := l.Owner()
		if g == 0 {
			return
		}
		n := 1 + l.ExtraHolds()
		out[g] = append(out[g], holding{lock: lockInfo(m), count: n})
	})
	for _, hs := range out {
		slices.SortFunc(hs, func(a, b holding) int { return cmp.Compare(a.lock.ID, b.lock.ID) })
	}
	return out
}

// Dump writes the detector's view of the program to w: in Cycles and
// Order modes every goroutine blocked on a locksmith lock, with the lock
// and its owner (for an RWMutex or RWMonitor, whether it waits to read or
// to write, and who holds the lock in which mode, with the number of
// readers; a reader waiting behind a writer that waits for readers to
// leave is shown behind that writer, queued on the lock); in Order mode also every lock each goroutine holds, with
// hold counts (none for a lock held alone, which has no detection state) (read holds of locks with metadata are listed as such);
// while a wait timeout is set, every goroutine in a condvar.Cond wait (a
// Monitor wait is one), with the Cond, the lock it is bound to, how long
// the watchdog has seen it wait, and the locks it holds that have
// metadata (every lock a goroutine has had to wait for has); and
// every problem reported to the reporter in force, with how often it has
// occurred since (see Report.Seen). A lock whose owner no longer runs (a
// goroutine that exited holding it: Go runs no code at goroutine exit, so
// the lock stays held) is marked as such; in Cycles mode, which keeps no
// record of held locks, such a lock appears only once a goroutine waits
// for it.
func Dump(w io.Writer) {
	bw := bufio.NewWriter(w)
	mode := CurrentMode()
	fmt.Fprintf(bw, "locksmith detector (mode %s)\n", mode)
	if mode == Off {
		bw.WriteString("detection is off: nothing is tracked\n")
		bw.Flush()
		return
	}
	bl := blockedNow()
	want := map[int64]bool{}
	for _, b := range bl {
		want[b.g] = true
		for _, h := range b.holders() {
			want[h] = true
		}
	}
	var hd map[int64][]holding
	if mode == Order {
		hd = heldNow()
		for _, lh := range loneHeldNow() {
			hd[lh.g] = append(hd[lh.g], holding{lock: &LockInfo{Type: "*" + lh.k.Name, Addr: lh.addr, ReadWrite: lh.k.RW},
				read: lh.read, alone: true})
		}
		for g := range hd {
			want[g] = true
		}
	}
	alive := liveGoroutines(want)
	queued := queuedWriters(bl)
	fmt.Fprintf(bw, "\nblocked goroutines: %d\n", len(bl))
	for _, b := range bl {
		waited := b.waited.Round(time.Millisecond)
		switch {
		case !b.lock.ReadWrite:
			fmt.Fprintf(bw, "  goroutine %d waiting %v to lock %s, held by %s\n",
				b.g, waited, b.lock, ownerString(b.owner, alive))
		case b.drain:
			fmt.Fprintf(bw, "  goroutine %d waiting %v to lock %s for writing (it holds out new readers), held for reading by %d goroutine(s)",
				b.g, waited, b.lock, len(b.readers))
			for i, r := range b.readers {
				sep := ", "
				if i == 0 {
					sep = ": "
				}
				fmt.Fprintf(bw, "%s%s", sep, ownerString(r, alive))
			}
			bw.WriteString("\n")
		case queued[[2]int64{int64(b.lock.ID), b.owner}]:
			fmt.Fprintf(bw, "  goroutine %d waiting %v to lock %s%s, behind writer %s, queued on it (readers: %d)\n",
				b.g, waited, b.lock, access(b.lock, b.read), ownerString(b.owner, alive), b.lock.Readers)
		default:
			fmt.Fprintf(bw, "  goroutine %d waiting %v to lock %s%s, held for writing by %s (readers: %d)\n",
				b.g, waited, b.lock, access(b.lock, b.read), ownerString(b.owner, alive), b.lock.Readers)
		}
	}
	if !core.CondWatch() {
		bw.WriteString("\ncond waiters: not tracked (they are while a wait timeout is set: see WithWaitTimeout)\n")
	} else {
		if hd == nil {
			hd = heldNow()
		}
		dumpCondWaiters(bw, hd)
	}
	if mode == Order {
		fmt.Fprintf(bw, "\nheld locks:\n")
		for _, g := range sortedGoroutines(hd) {
			state := ""
			if !alive[g] {
				state = " (exited)"
			}
			fmt.Fprintf(bw, "  goroutine %d%s holds:\n", g, state)
			for _, h := range hd[g] {
				switch {
				case h.alone && h.read:
					fmt.Fprintf(bw, "    %s for reading (taken alone: no detection state)\n", h.lock)
				case h.alone:
					fmt.Fprintf(bw, "    %s (taken alone: no detection state, hold count not tracked)\n", h.lock)
				case h.read:
					fmt.Fprintf(bw, "    %s for reading (readers: %d)\n", h.lock, h.lock.Readers)
				case h.lock.ReadWrite:
					fmt.Fprintf(bw, "    %s for writing (hold count %d)\n", h.lock, h.count)
				default:
					fmt.Fprintf(bw, "    %s (hold count %d)\n", h.lock, h.count)
				}
			}
		}
	}
	ps := problems()
	slices.SortFunc(ps, func(a, b *Report) int { return strings.Compare(problemKey(a), problemKey(b)) })
	fmt.Fprintf(bw, "\nreported problems: %d\n", len(ps))
	for _, r := range ps {
		n := r.Seen()
		fmt.Fprintf(bw, "  %s at %s: seen %d times over %d lock instances in %d goroutines\n",
			r.Kind, problemSites(r), n.Times, n.Locks, n.Goroutines)
	}
	bw.Flush() // like fmt.Fprint to a diagnostics stream: a write error has nowhere to go
}

// dumpCondWaiters lists the goroutines parked in a Cond wait, each with
// the Cond, the lock it is bound to, how long the watchdog has seen it
// wait, and the locks the goroutine holds (those in hd: locks with
// metadata, which every lock that a goroutine has had to wait for has).
func dumpCondWaiters(bw *bufio.Writer, hd map[int64][]holding) {
	var cws []core.CondWaitInfo
	core.CondWaiting(func(ci core.CondWaitInfo) { cws = append(cws, ci) })
	slices.SortFunc(cws, func(a, b core.CondWaitInfo) int { return cmp.Compare(a.G, b.G) })
	now := core.Now()
	fmt.Fprintf(bw, "\ncond waiters: %d\n", len(cws))
	for _, ci := range cws {
		fmt.Fprintf(bw, "  goroutine %d waiting on %s", ci.G, condInfo(ci.Tag))
		condSeen.mu.Lock()
		if m := condSeen.m[condKey{ci.G, ci.Epoch}]; m != nil {
			fmt.Fprintf(bw, ", for at least %v", time.Duration(now-m.first).Round(time.Millisecond))
		}
		condSeen.mu.Unlock()
		hs := hd[ci.G]
		if len(hs) == 0 {
			bw.WriteString(", holding no lock the detector knows of\n")
			continue
		}
		bw.WriteString(", holding:\n")
		for _, h := range hs {
			if h.read {
				fmt.Fprintf(bw, "    %s for reading\n", h.lock)
			} else {
				fmt.Fprintf(bw, "    %s%s (hold count %d)\n", h.lock, access(h.lock, false), h.count)
			}
		}
	}
}

// problemSites lists the call sites of r's steps, as file:line.
func problemSites(r *Report) string {
	var b strings.Builder
	for i, s := range r.Steps {
		if i > 0 {
			b.WriteString(", ")
		}
		if len(s.Stack) == 0 {
			b.WriteString("?")
			continue
		}
		fmt.Fprintf(&b, "%s:%d", s.Stack[0].File, s.Stack[0].Line)
	}
	return b.String()
}

func ownerString(g int64, alive map[int64]bool) string {
	switch {
	case g == 0:
		return "nobody (being released)"
	case !alive[g]:
		return fmt.Sprintf("goroutine %d, which has exited", g)
	}
	return fmt.Sprintf("goroutine %d", g)
}

// liveGoroutines reports which of want are still running.
func liveGoroutines(want map[int64]bool) map[int64]bool {
	alive := map[int64]bool{}
	for g := range goroutineStacks(want) {
		alive[g] = true
	}
	return alive
}

// WriteDOT writes the lock-order graph (Order mode) and the current
// wait-for edges as a Graphviz digraph: locks are boxes, goroutines are
// ellipses; a solid edge a -> b means b was taken while a was held (with
// an RWMutex or RWMonitor at either end, labelled with how a was held and
// b taken, for reading or writing, the first time); a
// dashed edge goroutine -> lock means the goroutine waits for the lock; a
// bold edge lock -> goroutine means the goroutine holds it, or, labelled
// "queued for writing by", that it is a writer waiting for the readers to
// leave, ahead of new readers. For an RWMutex or RWMonitor the labels say
// "for reading" or "for writing": a waiting writer's edges lead to every
// reader, a waiting reader's to the writer.
func WriteDOT(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph locksmith {\n\trankdir=LR;\n\tnode [shape=box];\n")
	locks := map[uint64]*LockInfo{}
	type pair struct {
		a, b  uint64
		label string
	}
	var order []pair
	deliverDrained(drainNestsNow()) // the nestings waiting in nests (nest.go) are edges too
	graphMu.Lock()
	for i := range graph.Len() {
		n := *graph.At(i)
		id := n.meta().ID
		locks[id] = lockInfo(n.meta())
		for _, e := range n.out {
			order = append(order, pair{id, e.to.meta().ID, edgeLabel(e)})
		}
	}
	graphMu.Unlock()
	bl := blockedNow()
	for _, b := range bl {
		locks[b.lock.ID] = b.lock
	}
	ids := make([]uint64, 0, len(locks))
	for id := range locks {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(bw, "\tL%d [label=%q];\n", id, locks[id].String())
	}
	slices.SortFunc(order, func(x, y pair) int {
		if x.a != y.a {
			return cmp.Compare(x.a, y.a)
		}
		return cmp.Compare(x.b, y.b)
	})
	for _, p := range order {
		if p.label != "" {
			fmt.Fprintf(bw, "\tL%d -> L%d [label=%q];\n", p.a, p.b, p.label)
			continue
		}
		fmt.Fprintf(bw, "\tL%d -> L%d;\n", p.a, p.b)
	}
	gs := map[int64]bool{}
	for _, b := range bl {
		gs[b.g] = true
		for _, h := range b.holders() {
			gs[h] = true
		}
	}
	for _, g := range sortedGoroutines(gs) {
		fmt.Fprintf(bw, "\tG%d [shape=ellipse,label=\"goroutine %d\"];\n", g, g)
	}
	// An edge into a read-write lock says the access wanted, an edge out
	// of it how the goroutine holds it.
	held := map[[2]int64]string{}
	queued := queuedWriters(bl)
	for _, b := range bl {
		fmt.Fprintf(bw, "\tG%d -> L%d [style=dashed,label=\"waits%s\"];\n", b.g, b.lock.ID, access(b.lock, b.read))
		for _, h := range b.holders() {
			key := [2]int64{int64(b.lock.ID), h}
			label := "held" + access(b.lock, b.drain) + " by"
			if queued[key] {
				label = "queued for writing by"
			}
			if held[key] != label {
				held[key] = label
				fmt.Fprintf(bw, "\tL%d -> G%d [style=bold,label=%q];\n", b.lock.ID, h, label)
			}
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// edgeLabel says, for an order edge with a read-write lock at either end,
// how the first lock was held and the second taken ("held for reading,
// taken for writing"); "" between a Mutex and a Monitor. graphMu is held.
func edgeLabel(e *edge) string {
	how := func(read bool) string {
		if read {
			return " for reading"
		}
		return " for writing"
	}
	var parts []string
	if e.from.meta().Class.RW {
		parts = append(parts, "held"+how(e.mode&readFrom != 0))
	}
	if e.to.meta().Class.RW {
		parts = append(parts, "taken"+how(e.mode&readTo != 0))
	}
	return strings.Join(parts, ", ")
}

// queuedWriters returns the (lock ID, goroutine) pairs of the writers in
// bl that wait for a read-write lock's readers to leave: they have claimed
// the write lock but hold nothing yet, and first-time readers queue behind
// them.
func queuedWriters(bl []blocked) map[[2]int64]bool {
	q := map[[2]int64]bool{}
	for _, b := range bl {
		if b.drain {
			q[[2]int64{int64(b.lock.ID), b.g}] = true
		}
	}
	return q
}
