package core

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/internal/gid"
)

// RWLock is the core of mutex.RWMutex and monitor.RWMonitor: a writer
// lock (a Lock, whose owner is the writer), a table of reader slots that
// records which goroutines hold the lock for reading, an overflow map for
// readers beyond the table, and a queue of readers blocked behind a writer.
// The zero value is an unlocked lock.
//
// # Finding the caller's read hold
//
// Go has no thread-local storage, and an owner-checked read lock must
// answer "does this goroutine hold a read lock?" on every RLock (to refuse
// or count a recursive one) and every RUnlock (to refuse a stranger's). The
// readers are kept inside the lock: eight slots holding the reader's
// goroutine ID (0 when free), with a hold count beside each that only the
// slot's reader touches. A goroutine's home slot is its ID mod 8 (IDs are
// sequential, so goroutines that run together rarely share one). A
// first-time read is one CompareAndSwap of the home slot and a load of the
// writer word; a read unlock is one store and a load; a re-entrant read
// (RWMonitor) is a load and an increment, no atomic write at all. The slot
// is the reader count: a writer that takes the writer lock then loads the
// slots, and a reader that claims a slot then loads the writer word (a
// Dekker handshake over sequentially consistent atomics), so either the
// reader sees the writer and backs out, or the writer sees the reader and
// waits for it. A reader whose home slot is taken uses another slot and is
// counted as displaced in the state word; a first-time read then looks
// for the caller in the other slots before it claims its home slot, and
// one that finds it, or finds the overflow map for readers beyond eight
// in use, takes the slow path, as does an unlock that does not find the
// caller at home. The map is dropped when it empties, so the memory of a
// burst of readers is returned.
//
// The fast paths that need only the home slot are also written in amd64
// assembly in packages mutex and monitor (their rwfast_asm.go), which
// read the goroutine ID in line: in Go, each RLock, RUnlock, Lock and
// Unlock is a call for the ID plus a call that cannot inline. A reader
// whose home slot is free takes it also while other readers are
// displaced, after looking for itself in the other slots (eight
// compares, only then); a displaced reader itself takes the slow path.
//
// Measured (docs/rwlocks.md: CPU time per operation on a shared 2-vCPU
// AMD EPYC, load average 14-18, against sync.RWMutex in the same run):
// a read pair 1.55x sync.RWMutex's (9.9 against 6.4 ns; 3.5x with the Go
// fast paths alone), RWMonitor's re-entrant read pair 1.2x (2.6x), write
// pairs 0.75x (1.7-1.85x); in 90 % and 99 % read mixes at 1-8
// goroutines, 1.01-1.12x sync.RWMutex's CPU per operation. A read pair
// beside a displaced reader costs 8-13 ns; the displaced reader's own
// pair 60-90 ns, and no allocation.
//
// Rejected alternatives:
//   - A reader count in the state word (sync.RWMutex's design) plus the
//     slots for identity: two atomic writes per RLock and per RUnlock
//     instead of one, for nothing the handshake does not give.
//   - Probing all eight slots on every RLock and RUnlock (for the
//     caller's ID and a free slot): measured 45-80 ns against sync's
//     13-16 ns per read pair on the loaded machine; the home slot plus the
//     displaced count needs one slot in the common case.
//   - Java's scheme, the first reader cached in the lock and the others in
//     a per-thread map: Go has no ThreadLocal, so "the others" would be a
//     shared map under a lock on every read by a second concurrent reader.
//   - Leaving the fast path whenever any reader is displaced (the state
//     word not zero): one displaced reader then sends every reader to
//     the slow path, 112-145 ns a pair against 8-13 ns with the look.
//   - A map keyed by goroutine ID for every reader: a lock and a hash on
//     every RLock, and an allocation per new reader.
//
// # Writer preference
//
// As with sync.RWMutex, a writer that holds the writer lock, whether still
// waiting for readers to leave (draining) or active, blocks first-time
// readers; writers queue on the writer lock in FIFO order with its
// starvation mode. When a writer unlocks with readers queued, it admits
// them all (claims their slots) before it releases the writer lock, so
// readers blocked by one writer go before the next writer, and neither
// side starves. A reader that already holds a read lock and takes another
// (RWMonitor's re-entry) never waits.
//
// The state word rs packs:
//
//	bits 32..62 number of readers in the overflow map
//	bits 2..31  number of readers displaced from their home slot
//	bit 1       draining: the writer waits for readers to leave; a reader
//	            that leaves wakes it (drainer)
//	bit 0       readersWaiting: the reader queue is not empty (changed
//	            under rmu)
type RWLock struct {
	w     Lock // must stay the first field: RWOf converts a *Lock back
	rs    atomic.Int64
	slots [rwSlots]atomic.Int64 // reader goroutine IDs, 0 when free
	holds [rwSlots]int32        // read holds of the slot's reader; touched only by that reader (and by the writer that admits it, before waking it)

	drainer atomic.Pointer[waiter] // the draining writer's waiter, while draining

	rmu      sync.Mutex // guards rq, rdurable and the queued readers' links and handoff
	rq       waitList
	rdurable int32 // queued readers parked durably in a bubble

	ovmu sync.Mutex
	ov   map[int64]int32 // overflow readers and their holds; guarded by ovmu
}

const (
	rwSlots          = 8 // noReaders and the docs assume 8
	rsReadersWaiting = 1 << 0
	rsDraining       = 1 << 1
	rsDispOne        = 1 << 2
	rsDispMask       = 1<<32 - rsDispOne
	rsOvShift        = 32
	rsOvOne          = 1 << rsOvShift
)

// Modes of a waiter (waiter.mode).
const (
	waitLock  uint8 = iota // queued on a Lock (a Mutex, Monitor, or a writer on an RWLock's writer lock)
	waitRead               // a first-time reader blocked by the writer
	waitDrain              // the writer, holding the writer lock, waiting for readers to leave
)

// RWOf returns the RWLock whose writer lock is l. k must be l's class and
// have RW set.
func RWOf(l *Lock, k *Class) *RWLock {
	if !k.RW {
		return nil
	}
	return (*RWLock)(unsafe.Pointer(l)) // w is the first field
}

// WriterLock returns the writer lock, the identity of the RWLock for
// detection (Meta, reports, Order mode).
func (l *RWLock) WriterLock() *Lock { return &l.w }

// Writer returns the goroutine that holds the writer lock (active or
// draining), or 0.
func (l *RWLock) Writer() int64 { return l.w.Owner() }

// --- Read side ----------------------------------------------------------

// RLockFast is the uncontended read path, which looks only at g's home
// slot. If g holds its read lock there, it adds a hold when reentrant and
// returns true, and returns false otherwise (the caller's slow path
// panics). Otherwise it claims the home slot and returns true, unless the
// slot is taken, the state word is not zero but for the displaced count
// (a reader in the overflow map, readers or a writer waiting), g is
// displaced to another slot, or a writer other than g
// (reentrant) or any writer (not reentrant) holds the writer lock; then it
// returns false having changed nothing, and the slow path decides.
func (l *RWLock) RLockFast(g int64, reentrant bool) bool {
	h := int(g) & (rwSlots - 1)
	s := l.slots[h].Load()
	if s == g {
		if reentrant {
			l.holds[h]++
			return true
		}
		return false
	}
	// rs == 0 but for the displaced count: nobody is in the overflow map,
	// no writer waits for readers, nor readers for a writer. While some
	// readers are displaced, g may be one of them: the other slots are
	// looked at. Without the look, any displaced reader would send every
	// reader to the slow path (BenchmarkRWMutexReadPairBesideDisplaced:
	// 90 ns of CPU time a read pair against 9 ns with it, on a loaded
	// 2-vCPU AMD EPYC); in the assembly it costs the eight compares only
	// while a reader is displaced.
	rs := l.rs.Load()
	if s != 0 || rs&^rsDispMask != 0 || rs != 0 && l.inSlots(g) || !l.slots[h].CompareAndSwap(0, g) {
		return false
	}
	l.holds[h] = 1
	if o := l.w.Owner(); o != 0 && (!reentrant || o != g) {
		l.slots[h].Store(0)
		l.readerLeft()
		return false
	}
	return true
}

// inSlots reports whether g is in a slot.
func (l *RWLock) inSlots(g int64) bool {
	for i := range rwSlots {
		if l.slots[i].Load() == g {
			return true
		}
	}
	return false
}

// ReenterRead adds a read hold for g if g holds a read lock in its home
// slot: the re-entrant read fast path, small enough to inline.
func (l *RWLock) ReenterRead(g int64) bool {
	h := g & (rwSlots - 1)
	if l.slots[h].Load() != g {
		return false
	}
	l.holds[h]++
	return true
}

// RUnlockFast drops one read hold of g, if g holds its read lock in its
// home slot: one decrement, or, for the last hold, a store and a load. It
// is small enough to inline, so it leaves the rare follow-up to the
// caller: it returns RUnlocked when done, RUnlockedWake when done and a
// draining writer must be woken (WakeDrainer), and RUnlockMissed, having
// done nothing, when g's hold is elsewhere or absent (see RUnlock).
func (l *RWLock) RUnlockFast(g int64) int {
	h := g & (rwSlots - 1)
	if l.slots[h].Load() != g {
		return RUnlockMissed
	}
	if n := &l.holds[h]; *n > 1 {
		*n--
		return RUnlocked
	}
	l.slots[h].Store(0)
	if l.rs.Load()&rsDraining != 0 {
		return RUnlockedWake
	}
	return RUnlocked
}

// RetreatRead gives back the home slot that g claimed on the fast path
// (the assembly's) before it saw a writer, waking the writer if it waits
// for the readers to leave. g then takes the slow path.
func (l *RWLock) RetreatRead(g int64) {
	l.slots[g&(rwSlots-1)].Store(0)
	l.readerLeft()
}

// Results of RUnlockFast.
const (
	RUnlockMissed = iota
	RUnlocked
	RUnlockedWake
)

// WakeDrainer wakes the writer waiting for readers to leave, if any, after
// the caller released its read hold (see wakeDrainer for when it panics).
func (l *RWLock) WakeDrainer() { strand(l.wakeDrainer(true)) }

// HoldsRead returns the number of read holds g has (0 if none). Only g
// may call it: the counts are g's.
func (l *RWLock) HoldsRead(g int64) int {
	if j := l.slotOf(g); j >= 0 {
		return int(l.holds[j])
	}
	if l.rs.Load()>>rsOvShift == 0 {
		return 0
	}
	l.ovmu.Lock()
	n := l.ov[g]
	l.ovmu.Unlock()
	return int(n)
}

// slotOf returns the slot that holds g, or -1: its home slot, or, while
// some reader is displaced, any slot.
func (l *RWLock) slotOf(g int64) int {
	h := int(g) & (rwSlots - 1)
	if l.slots[h].Load() == g {
		return h
	}
	if l.rs.Load()&rsDispMask == 0 {
		return -1
	}
	for j := range rwSlots {
		if l.slots[j].Load() == g {
			return j
		}
	}
	return -1
}

// AddReadHolds adds n (possibly negative) holds to g's read hold; g holds
// the lock for reading, and keeps at least one hold.
func (l *RWLock) AddReadHolds(g int64, n int) {
	if j := l.slotOf(g); j >= 0 {
		l.holds[j] += int32(n)
		return
	}
	l.ovmu.Lock()
	if _, ok := l.ov[g]; ok {
		l.ov[g] += int32(n)
	}
	l.ovmu.Unlock()
}

// RUnlock drops one read hold of g, releasing the read lock at zero (all
// holds at once if all), and reports whether g held it for reading; if
// not, nothing changes.
func (l *RWLock) RUnlock(g int64, all bool) bool {
	h := int(g) & (rwSlots - 1)
	if l.slots[h].Load() == g {
		if l.holds[h] > 1 && !all {
			l.holds[h]--
			return true
		}
		l.slots[h].Store(0)
		l.readerReleased()
		return true
	}
	return l.runlockSlow(g, all)
}

// runlockSlow releases a read hold kept outside g's home slot.
func (l *RWLock) runlockSlow(g int64, all bool) bool {
	if j := l.slotOf(g); j >= 0 {
		if l.holds[j] > 1 && !all {
			l.holds[j]--
			return true
		}
		l.slots[j].Store(0)
		l.rs.Add(-rsDispOne)
		l.readerReleased()
		return true
	}
	return l.runlockOverflow(g, all)
}

func (l *RWLock) runlockOverflow(g int64, all bool) bool {
	if l.rs.Load()>>rsOvShift == 0 {
		return false
	}
	l.ovmu.Lock()
	n, ok := l.ov[g]
	switch {
	case !ok:
		l.ovmu.Unlock()
		return false
	case n > 1 && !all:
		l.ov[g] = n - 1
		l.ovmu.Unlock()
		return true
	}
	delete(l.ov, g)
	if len(l.ov) == 0 {
		l.ov = nil // return the memory of a burst of readers
	}
	l.ovmu.Unlock()
	l.rs.Add(-rsOvOne)
	l.readerReleased()
	return true
}

// readerLeft wakes a draining writer after a reader backed out.
func (l *RWLock) readerLeft() {
	if l.rs.Load()&rsDraining != 0 {
		l.wakeDrainer(false)
	}
}

// readerReleased wakes a draining writer after a reader released its
// hold, and panics last if it cannot (see wakeDrainer).
func (l *RWLock) readerReleased() {
	if l.rs.Load()&rsDraining != 0 {
		strand(l.wakeDrainer(true))
	}
}

// wakeDrainer wakes the draining writer if the last reader has gone. A
// reader that leaves while others remain does not wake it: the last one
// to leave (each looks after its own store, and the stores are totally
// ordered) sees the slots empty and does. A writer parked durably in a
// bubble is woken only by goroutines of its bubble; see drainMode for why one
// of them always does.
//
// But for one case, as for a Mutex (see wakeable): a goroutine outside any
// bubble that holds a read lock while it runs synctest.Test counts, for
// the runtime, as a goroutine of the bubble until Test returns, so a
// writer of the bubble that waits for it to leave parks durably, and Test
// reports the deadlock. When that reader then releases its hold (released),
// the bubble is over: the writer, which holds the write lock, stays blocked
// for good, and so does the lock. The reader's release returns the
// message that says so, for strand. It cannot be another case: a reader
// that holds the lock while a writer drains took it before the writer
// decided, as a goroutine of the writer's bubble, and only the caller of
// synctest.Test passes for one and then leaves it. A reader that backs out
// on seeing the writer (not released) has held nothing the writer waited
// for; if it finds no reader left, the last reader of the bubble woke the
// writer.
func (l *RWLock) wakeDrainer(released bool) (stranded string) {
	d := l.drainer.Load()
	if d == nil {
		return ""
	}
	switch d.pmode.Load() {
	case parkChan:
		if l.noReaders() {
			d.post(false)
		}
	case parkSema:
		if l.noReaders() {
			d.post(true)
		}
	case parkDurable:
		if cd := CurDomain(); cd != d.dom {
			// The runtime would kill the program.
			if released && l.noReaders() {
				g := gid.Get()
				return fmt.Sprintf("locksmith: wakeup of goroutine %d, a writer durably blocked in synctest %s "+
					"until the readers leave, by goroutine %d in %s, the last reader, which the Go runtime does not allow: "+
					"the writer stays blocked for good, holding the write lock, and the read-write lock cannot be taken again "+
					"(goroutine %d held its read lock while it ran synctest.Test, and the bubble deadlocked on it)",
					d.g, d.dom, g, cd, g)
			}
			return ""
		}
		if l.noReaders() || !l.knownReaderIn(d.dom) {
			d.post(false)
		}
	}
	return ""
}

// readersIn reports whether some goroutine holds l for reading and every
// one is of domain d, none in the overflow map (whose IDs are added after
// the count, so cannot be checked). It may dump all goroutines (domainOf).
func (l *RWLock) readersIn(d Domain) bool {
	if l.rs.Load()>>rsOvShift != 0 {
		return false
	}
	some := false
	for i := range rwSlots {
		if h := l.slots[i].Load(); h != 0 {
			if domainOf(h) != d {
				return false
			}
			some = true
		}
	}
	return some
}

// knownReaderIn reports whether some slot holds a goroutine that the
// domain cache places in d.
func (l *RWLock) knownReaderIn(d Domain) bool {
	for i := range rwSlots {
		if h := l.slots[i].Load(); h != 0 {
			if hd, ok := cachedDomain(h); ok && hd == d {
				return true
			}
		}
	}
	return false
}

// enterRead takes a first-time read hold for g unless a writer other than
// g holds the writer lock. It uses a free slot or, when all are taken, the
// overflow map.
func (l *RWLock) enterRead(g int64) bool {
	h := int(g) & (rwSlots - 1)
	for i := range rwSlots {
		j := (h + i) & (rwSlots - 1)
		if l.slots[j].Load() != 0 || !l.slots[j].CompareAndSwap(0, g) {
			continue
		}
		l.holds[j] = 1
		if j != h {
			l.rs.Add(rsDispOne)
		}
		if o := l.w.Owner(); o != 0 && o != g {
			l.slots[j].Store(0)
			if j != h {
				l.rs.Add(-rsDispOne)
			}
			l.readerLeft()
			return false
		}
		return true
	}
	l.rs.Add(rsOvOne)
	if o := l.w.Owner(); o != 0 && o != g {
		l.rs.Add(-rsOvOne)
		l.readerLeft()
		return false
	}
	l.ovmu.Lock()
	if l.ov == nil {
		l.ov = map[int64]int32{}
	}
	l.ov[g] = 1
	l.ovmu.Unlock()
	return true
}

// admit gives g a read hold on behalf of the writer, which holds the
// writer lock, so no handshake is needed.
func (l *RWLock) admit(g int64) {
	h := int(g) & (rwSlots - 1)
	for i := range rwSlots {
		j := (h + i) & (rwSlots - 1)
		if l.slots[j].Load() == 0 && l.slots[j].CompareAndSwap(0, g) {
			l.holds[j] = 1
			if j != h {
				l.rs.Add(rsDispOne)
			}
			return
		}
	}
	l.rs.Add(rsOvOne)
	l.ovmu.Lock()
	if l.ov == nil {
		l.ov = map[int64]int32{}
	}
	l.ov[g] = 1
	l.ovmu.Unlock()
}

// TryRLock takes a first-time read hold for g if no writer holds the
// writer lock (g itself excepted when reentrant). The caller has checked
// that g holds no read lock.
func (l *RWLock) TryRLock(g int64, reentrant bool) bool {
	if o := l.w.Owner(); o != 0 && (!reentrant || o != g) {
		return false
	}
	return l.enterRead(g)
}

// RLockSlow blocks until g has a first-time read hold. The caller has
// checked that g holds no read lock (and, unless reentrant, not the write
// lock). ctx may be nil. On failure (ctx done, or the wait would close a
// deadlock cycle) g holds nothing new.
func (l *RWLock) RLockSlow(g int64, ctx context.Context, k *Class) error {
	return l.RLockDeadline(g, ctx, time.Time{}, k)
}

// RLockDeadline is RLockSlow that also gives up at deadline, unless it is
// the zero Time, returning context.DeadlineExceeded; as with
// Lock.AcquireDeadline, the timer is made only when the reader is about
// to park, at most once per call.
func (l *RWLock) RLockDeadline(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	if l.enterRead(g) {
		return nil
	}
	return l.rlockWait(g, ctx, deadline, k)
}

// rlockWait is RLockSlow once a first try has failed. It is a function of
// its own because the context callback captures w, which moves w to the
// heap (8 bytes, about 20 ns): declared in RLockSlow, w would cost that
// allocation on every read by a reader whose home slot another reader
// holds, one that finds a free slot at once included (1 alloc and
// 115-145 ns a pair with seven other readers in, against 60-90 ns).
func (l *RWLock) rlockWait(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	var w *waiter
	registered := false
	// stop and dstop unregister the context and deadline callbacks of a
	// park on sem; expired is the deadline of a park on ch.
	var stop, dstop func() bool
	var dt deadlineTimer
	var expired <-chan time.Time
	leave := func(err error) error {
		if registered {
			unregister(w)
		}
		if stop != nil {
			stop()
		}
		if dstop != nil {
			dstop()
		}
		dt.stop()
		return err
	}
	// quit is leave for a reader that gives up while queued (or dequeued
	// with its token on the way). It unregisters before abandonRead, as
	// Lock.acquireDeadline does before abandon: a walk that found the
	// reader still registered once it has decided to return would see it
	// wait for the writer, and could refuse a goroutine that waits for a
	// lock the reader holds, as closing a cycle that is no longer real.
	quit := func(err error) error {
		if registered {
			unregister(w)
			registered = false
		}
		l.abandonRead(w)
		return leave(err)
	}
	past := func() bool { return !deadline.IsZero() && time.Until(deadline) <= 0 }
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	for first := true; ; first = false {
		if !first && l.enterRead(g) {
			return leave(nil)
		}
		if spinUntil(func() bool { o := l.w.Owner(); return o == 0 || o == g }) && l.enterRead(g) {
			return leave(nil)
		}
		if w == nil {
			w = newWaiter(g, &l.w, k)
			w.rw, w.mode = l, waitRead
		}
		l.rmu.Lock()
		l.rs.Or(rsReadersWaiting)
		// The handshake with unlockWrite: it releases the writer lock and
		// then loads rs, this sets readersWaiting and then loads the owner.
		o := l.w.Owner()
		if o == 0 || o == g {
			if l.rq.head == nil {
				l.rs.And(^int64(rsReadersWaiting))
			}
			l.rmu.Unlock()
			continue
		}
		// A queued reader is woken by the writer it saw (o, when it
		// unlocks) or by an earlier writer finishing its Unlock (see
		// takeReaders); those skip a durable reader of another domain,
		// which o then wakes. So it may park durably if o is of its bubble.
		l.renqueue(w, w.dom.Bubble() && holderIn(o, w.dom))
		sema := w.sema
		w.makeChan()
		l.rmu.Unlock()
		// Registered whatever the mode, as Lock.Acquire does: a reader
		// parked while detection is Off must be visible to the walks of
		// goroutines that park after it is turned on.
		if !registered {
			register(w)
			registered = true
			if Mode() != ModeOff {
				noteSite(&l.w, k)
			}
		}
		if Mode() != ModeOff {
			if cycle := checkCycle(w); cycle != nil {
				// Out of the queue before the report is made, as in
				// Lock.acquireDeadline: a reporter may panic.
				quit(nil)
				return deadlock(cycle)
			}
		}
		if past() {
			return quit(context.DeadlineExceeded)
		}
		if sema {
			// A callback registered in an earlier round may have run while
			// w was not queued: hence the look at ctx (and at the deadline,
			// above).
			if ctx != nil && ctx.Err() != nil {
				return quit(ctx.Err())
			}
			if ctx != nil && stop == nil {
				stop = context.AfterFunc(ctx, func() { w.cancelQueued(&l.rmu, l.runlink, ctx.Err()) })
			}
			if !deadline.IsZero() && dstop == nil {
				dstop = time.AfterFunc(time.Until(deadline), func() {
					w.cancelQueued(&l.rmu, l.runlink, context.DeadlineExceeded)
				}).Stop
			}
			w.sem.Lock()
			if err := w.cancelled; err != nil {
				return leave(err) // dequeued by the callback: nothing handed over
			}
		} else {
			if !deadline.IsZero() && expired == nil {
				expired = dt.arm(deadline)
			}
			select {
			case <-w.ch:
			case <-done:
				return quit(ctx.Err())
			case <-expired:
				return quit(context.DeadlineExceeded)
			}
		}
		if w.handoff {
			return leave(nil)
		}
	}
}

// abandonRead takes a cancelled or refused reader out of the queue. If a
// writer already dequeued it, the token is on its way: a read hold handed
// over with it is released again, so that it is passed on, not lost.
func (l *RWLock) abandonRead(w *waiter) {
	if testHookAbandonRead != nil {
		testHookAbandonRead(l)
	}
	l.rmu.Lock()
	if w.inq {
		l.runlink(w)
		l.rmu.Unlock()
		return
	}
	sema := w.sema
	l.rmu.Unlock()
	w.awaitToken(sema) // posted by the writer that dequeued w, or by the cancelling callback
	if w.handoff {
		w.handoff = false
		l.RUnlock(w.g, true)
	}
}

// testHookAbandonRead, if set (by tests), runs in abandonRead before it
// takes rmu.
var testHookAbandonRead func(*RWLock)

// renqueue appends w to the reader queue, parking durably if durable;
// rmu is held.
func (l *RWLock) renqueue(w *waiter, durable bool) {
	w.inq = true
	w.handoff = false
	w.setPark(durable)
	if durable {
		l.rdurable++
	}
	l.rq.pushBack(w)
}

func (l *RWLock) runlink(w *waiter) {
	l.rq.unlink(w)
	w.inq = false
	if w.durable {
		l.rdurable--
	}
	if l.rq.head == nil {
		l.rs.And(^int64(rsReadersWaiting))
	}
}

// takeReaders detaches from the reader queue, in order, the readers the
// calling writer may wake; rmu is held. That is all of them, except
// readers parked durably in a bubble other than the caller's domain: such
// a reader saw another writer own the lock when it queued, one of its
// bubble (RLockSlow), and that writer has released the writer lock since
// (the caller owns or owned it after) but not yet taken the readers, the
// last step of its Unlock; it wakes them.
func (l *RWLock) takeReaders() *waiter {
	var d Domain // the caller's, looked up only if a durable reader is queued
	if l.rdurable > 0 {
		d = CurDomain()
	}
	var h, t *waiter
	for w := l.rq.head; w != nil; {
		next := w.next
		if !w.durable || w.dom == d {
			l.runlink(w)
			if t == nil {
				h = w
			} else {
				t.next = w
			}
			t = w
		}
		w = next
	}
	return h
}

// wakeList wakes each reader of a list detached by takeReaders.
func wakeList(h *waiter) {
	for w := h; w != nil; {
		next := w.next
		w.next = nil
		sema := w.sema // set by w under rmu before it queued; w changes it only after this wakeup
		w.checkWaker()
		w.wake(sema)
		w = next
	}
}

// --- Write side ---------------------------------------------------------

// LockFast takes the write lock for g if nobody holds the lock in any
// mode: the uncontended write path.
func (l *RWLock) LockFast(g int64) bool {
	if !l.w.FastAcquire(g) {
		return false
	}
	if l.noReaders() {
		return true
	}
	l.Unlock(g) // readers are in: the slow path checks for upgrade, then waits
	return false
}

// WriteLocked reports whether a goroutine holds the write lock (not one
// still waiting for readers to leave).
func (l *RWLock) WriteLocked() bool {
	return l.w.Owner() != 0 && l.rs.Load()&rsDraining == 0
}

// Lock blocks until g holds the write lock: the writer lock first, then
// the readers gone. The caller has checked for re-entry. ctx may be nil.
// On failure g holds nothing new, and readers that queued behind it in the
// meantime are let in.
func (l *RWLock) Lock(g int64, ctx context.Context, k *Class) error {
	return l.LockDeadline(g, ctx, time.Time{}, k)
}

// LockDeadline is Lock that also gives up at deadline, unless it is the
// zero Time, returning context.DeadlineExceeded. Its two waits (for the
// writer lock, then for the readers to leave) make the timer only when
// about to park, and share it on a channel park: one timer per call. (A
// park on sem, in a bubble, makes a callback per wait, as the callback
// names its waiter.)
func (l *RWLock) LockDeadline(g int64, ctx context.Context, deadline time.Time, k *Class) error {
	var dt deadlineTimer
	if !l.w.FastAcquire(g) {
		if err := l.w.acquireDeadline(g, ctx, deadline, k, &dt); err != nil {
			return err
		}
	}
	if l.noReaders() {
		return nil
	}
	return l.drain(g, ctx, deadline, k, &dt)
}

// TryLock takes the write lock for g if nobody holds the lock in any mode.
func (l *RWLock) TryLock(g int64) bool {
	if !l.w.TryAcquire(g) {
		return false
	}
	if l.noReaders() {
		return true
	}
	l.Unlock(g)
	return false
}

// noReaders reports whether no goroutine holds a read lock. The writer
// loads the slots after its CompareAndSwap on the writer lock; see RWLock.
func (l *RWLock) noReaders() bool {
	// One OR of every slot, without a branch per slot.
	set := l.slots[0].Load() | l.slots[1].Load() | l.slots[2].Load() | l.slots[3].Load() |
		l.slots[4].Load() | l.slots[5].Load() | l.slots[6].Load() | l.slots[7].Load()
	return set == 0 && l.rs.Load()>>rsOvShift == 0
}

// drain waits, holding the writer lock, until the readers have left.
func (l *RWLock) drain(g int64, ctx context.Context, deadline time.Time, k *Class, dt *deadlineTimer) error {
	w := newWaiter(g, &l.w, k)
	w.rw, w.mode = l, waitDrain
	if w.dom == DomOutside {
		w.ch = make(chan struct{}, 1)
	}
	var done <-chan struct{}
	if ctx != nil {
		done = ctx.Done()
	}
	// cstop and dstop unregister the context and deadline callbacks of a
	// park on sem; expired is the deadline of a park on ch, on *dt.
	var cstop, dstop func() bool
	var expired <-chan time.Time
	// The handshake with RUnlock: the drainer is published and the flag
	// set before the scan; a reader stores 0 in its slot and then loads
	// the flag. Either the scan sees the slot free or the reader wakes w.
	l.drainer.Store(w)
	l.rs.Or(rsDraining)
	registered := false
	stop := func() {
		l.rs.And(^int64(rsDraining))
		l.drainer.Store(nil)
		if registered {
			unregister(w)
		}
		if cstop != nil {
			cstop()
		}
		if dstop != nil {
			dstop()
		}
		dt.stop()
	}
	// failed returns why the wait ends unfinished (ctx done or the
	// deadline past while readers remain), or nil.
	failed := func() error {
		var err error
		switch {
		case ctx != nil && ctx.Err() != nil:
			err = ctx.Err()
		case !deadline.IsZero() && time.Until(deadline) <= 0:
			err = context.DeadlineExceeded
		}
		if err == nil || l.noReaders() {
			return nil
		}
		return err
	}
	for !l.noReaders() {
		if spinUntil(l.noReaders) {
			break
		}
		if !registered { // whatever the mode: see RLockSlow
			register(w)
			registered = true
			if Mode() != ModeOff {
				noteSite(&l.w, k)
			}
		}
		if Mode() != ModeOff {
			if cycle := checkCycle(w); cycle != nil {
				stop()
				l.Unlock(g)
				return deadlock(cycle)
			}
		}
		if testHookDrain != nil {
			testHookDrain(l, true)
		}
		mode := l.drainMode(w)
		if testHookDrain != nil {
			testHookDrain(l, false)
		}
		if l.noReaders() {
			break
		}
		if mode == parkSema {
			if ctx != nil && cstop == nil {
				cstop = context.AfterFunc(ctx, func() { w.post(true) })
			}
			if !deadline.IsZero() && dstop == nil {
				dstop = time.AfterFunc(time.Until(deadline), func() { w.post(true) }).Stop
			}
			if failed() == nil {
				w.sem.Lock()
				w.posted.Store(false)
			}
			if err := failed(); err != nil {
				stop()
				l.Unlock(g)
				return err
			}
			continue
		}
		if err := failed(); err != nil {
			stop()
			l.Unlock(g)
			return err
		}
		if !deadline.IsZero() && expired == nil {
			expired = dt.arm(deadline)
		}
		select {
		case <-w.ch:
		case <-done:
			stop()
			l.Unlock(g)
			return ctx.Err()
		case <-expired:
			if l.noReaders() {
				break // the readers left as the deadline passed: the lock is taken
			}
			stop()
			l.Unlock(g)
			return context.DeadlineExceeded
		}
	}
	stop()
	return nil
}

// testHookDrain, if set (by tests), runs in drain just before (before
// true) and just after drainMode.
var testHookDrain func(l *RWLock, before bool)

// drainMode chooses and publishes how the draining writer w parks next;
// the caller then looks at the readers again before it parks. Any
// goroutine that leaves the read side (a reader that unlocks, or one that
// backs out on seeing the writer, see enterRead) may have to wake w, and
// any goroutine of any domain may be about to back out; a goroutine of
// another domain never wakes a durable w (wakeDrainer). So w parks durably
// only if a goroutine of its bubble is bound to wake it: when, after the
// choice is published, some reader is of its bubble and every reader is
// (readersIn).
//   - Each such reader leaves after the check, so after the publication:
//     it stores 0 in its slot, then loads the mode and finds durable. It
//     wakes w unless a reader that the domain cache places in w's bubble
//     is still in a slot (knownReaderIn), which then leaves in turn; the
//     last of them to leave (the stores are totally ordered, each looks
//     after its own) finds none and wakes w. A goroutine that backs out
//     meanwhile and is known to be of the bubble counts as one of them
//     (it stores 0, then looks, as a leaving reader does); any other
//     makes the reader that sees it wake w, which then looks again.
//   - A goroutine that comes in after the check is not a reader (the
//     writer lock is held), only backing out. With no reader of its
//     bubble in, w would be left to such a goroutine of another domain,
//     seen by the caller's look, which does not wake a durable w: so w
//     parks on sem then, which anyone may end. The case arises when the
//     last reader leaves (or backs out) just before the choice, in any
//     domain, and another domain's goroutine backs out just after it.
//
// Rejected alternative: choosing durable when every reader is of the
// bubble, with none in at all. It loses the wakeup in the second case,
// which the drain then sleeps through for good.
func (l *RWLock) drainMode(w *waiter) uint32 {
	switch {
	case w.dom == DomOutside:
		w.pmode.Store(parkChan)
	case w.dom.Bubble() && l.readersIn(w.dom):
		w.makeChan() // w.sema is false
		w.pmode.Store(parkDurable)
		if !l.readersIn(w.dom) {
			w.pmode.Store(parkSema)
		}
	default:
		w.pmode.Store(parkSema)
	}
	return w.pmode.Load()
}

// Unlock releases g's write lock and reports whether g held it; if not,
// nothing changes. Readers queued behind g are admitted before the writer
// lock is released, so that they go before the next writer.
func (l *RWLock) Unlock(g int64) bool {
	if l.rs.Load()&rsReadersWaiting == 0 {
		if !l.w.FastRelease(g) {
			return l.UnlockHeld(g)
		}
		l.afterRelease()
		return true
	}
	if l.w.Owner() != g {
		return false
	}
	l.rmu.Lock()
	h := l.takeReaders()
	for w := h; w != nil; w = w.next {
		l.admit(w.g)
		w.handoff = true
	}
	stranded := ""
	if !l.w.FastRelease(g) {
		_, stranded = l.w.releaseStranded(g)
	}
	l.rmu.Unlock()
	wakeList(h)
	strand(stranded) // last: see wakeable
	return true
}

// UnlockHeld is Unlock for the assembly fast path, after it saw no reader
// queued and its CompareAndSwap of the writer lock from g's ID to 0 failed
// (writers are queued, or g is not the writer).
func (l *RWLock) UnlockHeld(g int64) bool {
	ok, stranded := l.w.releaseStranded(g)
	if !ok {
		return false
	}
	l.afterRelease()
	strand(stranded) // last: see wakeable
	return true
}

// afterRelease follows a release of the writer lock that saw no reader
// queued before it. The handshake with RLockSlow: a reader that queued
// after that look saw the writer as the owner; it set readersWaiting
// before it looked, so one of the two sees the other.
func (l *RWLock) afterRelease() {
	if l.rs.Load()&rsReadersWaiting != 0 {
		l.WakeQueuedReaders()
	}
}

// WakeQueuedReaders wakes, to retry, the readers queued behind a writer
// that has released the writer lock without admitting them; the assembly
// fast path of Unlock calls it when it sees readersWaiting after its
// release.
func (l *RWLock) WakeQueuedReaders() {
	l.rmu.Lock()
	h := l.takeReaders()
	l.rmu.Unlock()
	wakeList(h)
}

// --- Parking ------------------------------------------------------------

// spinUntil makes a few bounded looks at cond before the caller parks, as
// spin does for Lock: critical sections are often shorter than a park and
// a wakeup. On a single CPU it does not spin.
//
// One round of 30 looks and one yield, not spin's four rounds: readers
// and writers of a read-mostly lock wait here far more often than a
// Mutex's callers spin, and every further yielding round kept a second
// CPU busy for nothing. In the read-mostly mixes with 4 and 8 goroutines
// (90 % reads, ~100 ns inside; AMD EPYC, 2 cores, Go 1.26.8; `go run
// ./bench/cmd/lockbench -workload rw`), four rounds cost 1.6-2.0x
// sync.RWMutex's CPU per operation on 1.8 cores; one round costs 1.16-1.29x
// on 1.2 cores at 0.91x its throughput. Parking at once (no yield) cut the
// CPU less and the throughput to 0.67x: a park costs more than a yield.
func spinUntil(cond func() bool) bool {
	if ncpu == 1 {
		return false
	}
	for range 30 {
		if cond() {
			return true
		}
	}
	runtime.Gosched()
	return cond()
}

// noteSite records, for reports, the first wait on an unnamed lock.
func noteSite(l *Lock, k *Class) {
	if m := l.Meta(k); m.waitSite.Load() == nil {
		// 3: noteSite, its caller and that one's caller.
		rec := make([]uintptr, siteWords(3))
		rec = rec[:fpstack.Record(3, rec)]
		m.waitSite.CompareAndSwap(nil, &rec)
	}
	if engine != nil {
		engine.Parked()
	}
}

// --- Introspection ------------------------------------------------------

// Readers returns the number of goroutines holding l for reading.
func (l *RWLock) Readers() int {
	n := 0
	for i := range rwSlots {
		if l.slots[i].Load() != 0 {
			n++
		}
	}
	return n + int(l.rs.Load()>>rsOvShift)
}

// ReaderIDs returns the goroutines holding l for reading.
func (l *RWLock) ReaderIDs() []int64 {
	var gs []int64
	for i := range rwSlots {
		if g := l.slots[i].Load(); g != 0 {
			gs = append(gs, g)
		}
	}
	if l.rs.Load()>>rsOvShift != 0 {
		l.ovmu.Lock()
		for g := range l.ov {
			gs = append(gs, g)
		}
		l.ovmu.Unlock()
	}
	return gs
}

// holdsReadNow reports whether g holds l for reading, from any goroutine
// (the walk's); it does not read the hold counts, which belong to g.
func (l *RWLock) holdsReadNow(g int64) bool {
	for i := range rwSlots {
		if l.slots[i].Load() == g {
			return true
		}
	}
	if l.rs.Load()>>rsOvShift == 0 {
		return false
	}
	l.ovmu.Lock()
	_, ok := l.ov[g]
	l.ovmu.Unlock()
	return ok
}

// QueuedReaders returns the number of readers parked behind a writer.
func (l *RWLock) QueuedReaders() int {
	l.rmu.Lock()
	defer l.rmu.Unlock()
	n := 0
	for w := l.rq.head; w != nil; w = w.next {
		n++
	}
	return n
}

// Draining reports whether a writer holds the writer lock and is parked
// (or about to park) waiting for readers to leave.
func (l *RWLock) Draining() bool { return l.rs.Load()&rsDraining != 0 }

// QueuedWriters returns the number of writers parked on the writer lock.
func (l *RWLock) QueuedWriters() int { return l.w.QueueLen() }

// OverflowAllocated reports whether the overflow map exists (for the
// memory tests).
func (l *RWLock) OverflowAllocated() bool {
	l.ovmu.Lock()
	defer l.ovmu.Unlock()
	return l.ov != nil
}

// Order-mode seam for read-write locks: acquisitions and releases go to
// the engine with their mode, which keeps read holds apart from write
// holds and applies the rules for readers (package detect's order.go).

// AcquiredRW forwards an acquisition of an RWLock in mode read. As with
// Acquired, if the engine does not return (a LockOrder reporter panicked
// or ended the goroutine), the acquisition is undone before the panic or
// the exit goes on: a write through RWLock.Unlock, so that readers queued
// behind it are let in, a read by dropping the hold just taken. mw is the
// mode word the caller loaded (see Acquired): while a recheck is
// pending, it runs it first, and forwards only in Order mode.
func AcquiredRW(l *Lock, k *Class, g int64, try, read bool, mw int32) {
	if mw != ModeOrder && !settle(g) {
		return
	}
	report := engine.AcquiredRW(l, k, g, try, read)
	if report == nil {
		return
	}
	done := false
	defer func() {
		if done {
			return
		}
		if read {
			RWOf(l, k).RUnlock(g, false)
			engine.ReleasedRW(l, g, true)
			return
		}
		// Forwarded after the release, deferred in case the release
		// panics (see wakeable): the engine asks the lock what g still
		// holds, and drops g's record only once g is no longer the writer.
		defer engine.ReleasedRW(l, g, false)
		RWOf(l, k).Unlock(g)
	}()
	report()
	done = true
}

// ReleasedRW forwards a release of an RWLock in mode read, made before the
// call: the engine asks the lock what g still holds; mw is as for
// AcquiredRW.
func ReleasedRW(l *Lock, g int64, read bool, mw int32) {
	if mw != ModeOrder && !settle(g) {
		return
	}
	engine.ReleasedRW(l, g, read)
}

// HoldsReadNow reports whether g holds l for reading; unlike HoldsRead it
// may be called from any goroutine (package detect's sweeper).
func (l *RWLock) HoldsReadNow(g int64) bool { return l.holdsReadNow(g) }
