package core

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/locksmith-go/locksmith/internal/compat"
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
// What this costs against sync.RWMutex, with the assembly and with the
// Go fast paths alone (read pairs, RWMonitor's re-entrant read pairs,
// write pairs, read-mostly mixes, a read pair beside a displaced reader,
// and the displaced reader's own pair, which allocates nothing): see
// BenchmarkRWMutexReadPair, BenchmarkRWMutexWritePair,
// BenchmarkRWMutexReadPairBesideDisplaced,
// BenchmarkRWMutexReadPairWithReaders and BenchmarkRWMutexMix in
// mutex/rwbench_test.go, their RWMonitor counterparts in
// monitor/rwbench_test.go, and `go run ./bench/cmd/lockbench -workload rw`
// (docs/rwlocks.md reads them).
//
// Rejected alternatives:
//   - A reader count in the state word (sync.RWMutex's design) plus the
//     slots for identity: two atomic writes per RLock and per RUnlock
//     instead of one, for nothing the handshake does not give.
//   - Probing all eight slots on every RLock and RUnlock (for the
//     caller's ID and a free slot): a read pair far dearer than
//     sync.RWMutex's (BenchmarkRWMutexReadPair); the home slot plus the displaced
//     count needs one slot in the common case.
//   - Java's scheme, the first reader cached in the lock and the others in
//     a per-thread map: Go has no ThreadLocal, so "the others" would be a
//     shared map under a lock on every read by a second concurrent reader.
//   - Leaving the fast path whenever any reader is displaced (the state
//     word not zero): one displaced reader then sends every reader to
//     the slow path, a pair far dearer than with the look (BenchmarkRWMutexReadPairBesideDisplaced).
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
	rs    compat.Int64
	slots [rwSlots]atomic.Int64 // reader goroutine IDs, 0 when free
	holds [rwSlots]int32        // read holds of the slot's reader; touched only by that reader (and by the writer that admits it, before waking it)
	// rpcs is, per slot, where the slot's reader took its read hold (see
	// SetReaderPC): written only by that reader, after it took the hold,
	// and only when it differs from the word there (a reader mostly
	// retakes a lock at its last site: no store); read atomically by the
	// reader (a recursive RLock's panic) and by the detector. A slot's
	// word is its last reader's until the next reader stores its own.
	rpcs [rwSlots]atomic.Uintptr

	drainer atomic.Pointer[waiter] // the draining writer's waiter, while draining

	rmu      sync.Mutex // guards rq, rdurable and the queued readers' links and handoff
	rq       waitList
	rdurable int32 // queued readers parked durably in a bubble

	ovmu sync.Mutex
	ov   map[int64]ovReader // overflow readers; guarded by ovmu
}

// ovReader is a reader in the overflow map: its holds and where it took
// its read hold (the slots' holds and rpcs).
type ovReader struct {
	holds int32
	pc    uintptr
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

var _ [0]struct{} = [unsafe.Offsetof(RWLock{}.w)]struct{}{} // w comes first: RWOf converts a *Lock

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
	// reader to the slow path, at many times the CPU time of a read
	// pair with the look (BenchmarkRWMutexReadPairBesideDisplaced in
	// mutex/rwbench_test.go); in the assembly it costs the eight compares
	// only while a reader is displaced.
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
	n := l.ov[g].holds
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
	if r, ok := l.ov[g]; ok {
		r.holds += int32(n)
		l.ov[g] = r
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
	r, ok := l.ov[g]
	switch {
	case !ok:
		l.ovmu.Unlock()
		return false
	case r.holds > 1 && !all:
		r.holds--
		l.ov[g] = r
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
		l.ov = map[int64]ovReader{}
	}
	l.ov[g] = ovReader{holds: 1}
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
		l.ov = map[int64]ovReader{}
	}
	l.ov[g] = ovReader{holds: 1}
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
	h, stranded := l.takeReaders()
	for w := h; w != nil; w = w.next {
		l.admit(w.g)
		w.handoff = true
	}
	if !l.w.FastRelease(g) {
		_, msg := l.w.releaseStranded(g)
		stranded = joinStranded(stranded, msg)
	}
	l.rmu.Unlock()
	wakeList(h)
	strand(stranded) // last: see wakeable and takeReaders
	return true
}

// joinStranded joins the messages of two stranded waiters (either may be
// ""), for one strand.
func joinStranded(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + "; and " + b
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

// SetWriterPC records pc as where the writer took the write lock (see
// Lock.SetHolderPC); only the writer calls it, once it holds the lock
// with the readers gone.
func (l *RWLock) SetWriterPC(pc uintptr) { l.w.SetHolderPC(pc) }

// WriterPC returns where the writer took the write lock, or 0 (see
// Lock.HolderPC, whose rules it follows).
func (l *RWLock) WriterPC() uintptr { return l.w.HolderPC() }

// SetReaderPC records pc as where g took its read hold: in g's slot
// (rpcs), or beside its entry in the overflow map. Only g calls it, once
// it holds the lock for reading, on a first-time read (a re-entry keeps
// the first site). The home slot is looked at first, so that the usual
// reader pays a load of its slot and of the word there.
func (l *RWLock) SetReaderPC(g int64, pc uintptr) {
	if j := l.slotOf(g); j >= 0 {
		if l.rpcs[j].Load() != pc {
			l.rpcs[j].Store(pc)
		}
		return
	}
	l.setOverflowPC(g, pc)
}

// setOverflowPC is SetReaderPC for a reader in the overflow map.
func (l *RWLock) setOverflowPC(g int64, pc uintptr) {
	if l.rs.Load()>>rsOvShift == 0 {
		return
	}
	l.ovmu.Lock()
	if r, ok := l.ov[g]; ok {
		r.pc = pc
		l.ov[g] = r
	}
	l.ovmu.Unlock()
}

// ReaderPC returns where g took its read hold of l, as SetReaderPC
// recorded it, or 0 if g holds no read lock or its path recorded no PC.
// Any goroutine may call it; for a reader other than the caller, the
// answer may be another reader's (g may have left and another reader
// taken its slot), never a torn word.
func (l *RWLock) ReaderPC(g int64) uintptr {
	for i := range rwSlots {
		if l.slots[i].Load() == g {
			return l.rpcs[i].Load()
		}
	}
	if l.rs.Load()>>rsOvShift == 0 {
		return 0
	}
	l.ovmu.Lock()
	pc := l.ov[g].pc
	l.ovmu.Unlock()
	return pc
}
