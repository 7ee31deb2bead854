package core

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// Lost holds: what a Cond wait leaves behind when its reacquire panics.
//
// A wait releases every hold its goroutine has on the lock and retakes
// them before it returns. If the retake panics (deadlock detection refuses
// it, or a LockOrder reporter panics or calls runtime.Goexit), Wait panics
// without the lock, as every Lock that panics does. The caller's code was
// written for the lock held, though: in the idiom
//
//	mu.Lock()
//	defer mu.Unlock()
//	for !ready { c.Wait() }
//
// the deferred Unlock then runs on a lock the goroutine does not hold. Its
// ErrNotOwner panic would replace the wait's, so recover() would see a
// misuse instead of the deadlock. The lock therefore remembers, per
// goroutine, the holds such a wait lost and why; Unlock consults that
// record only once it has found that the caller does not hold the lock (its
// failure path), so the record costs nothing on the fast path.
//
// A goroutine that recovers from the wait's panic and never unlocks leaves
// its record behind until its next Cond wait on the lock retakes the lock
// (ForgetLost) or a failed Unlock of the lock by it uses the record up: such
// an Unlock is a misuse either way, and says what the wait lost. At most one
// record per goroutine and lock exists. A goroutine that exits first (a
// server's handler whose panic the server recovers) leaves a record that
// nothing can use up, since goroutine IDs are not reused: when the records
// have doubled since the last look (minLostPrune at first), LoseHolds
// drops those of goroutines no longer in a dump of all goroutines, so
// that they stay about twice the records of running goroutines. The
// goroutine of a cgo callback that has returned, or of finalizers between
// two, is not in the dump either: its record goes, as the function that
// lost the holds has returned.
//
// Rejected alternative: keeping the record in a global map keyed by lock.
// The map would keep the lock alive for as long as a record is left
// unconsumed (a goroutine that recovers and never unlocks); in the lock's
// Meta it goes away with the lock.

// lostHold is one goroutine's lost holds on one lock.
type lostHold struct {
	g     int64
	n     int // holds not yet accounted for by an Unlock
	cause any // the retake's panic value; nil for runtime.Goexit
}

// lostHolds is kept in a lock's Meta, made by the first wait that loses
// holds: most locks never need one, and the Meta stays smaller (see
// detect's lockState).
type lostHolds struct {
	n       atomic.Int32 // len(list), for a look without mu
	mu      sync.Mutex
	list    []lostHold // guarded by mu
	pruneAt int        // guarded by mu: len(list) at which LoseHolds prunes next (0: minLostPrune)
}

// minLostPrune is the number of records at which LoseHolds first looks
// for records of exited goroutines.
const minLostPrune = 8

// LoseHolds records that goroutine g's Cond wait on l could not retake its
// n holds because the retake panicked with cause (nil: the goroutine is
// ending with runtime.Goexit). A record already there for g is replaced:
// its holds were retaken and released since, or g recovered and went on
// without unlocking.
func (l *Lock) LoseHolds(k *Class, g int64, n int, cause any) {
	lh := l.Meta(k).lostHolds()
	lh.mu.Lock()
	defer lh.mu.Unlock()
	for i := range lh.list {
		if lh.list[i].g == g {
			lh.list[i] = lostHold{g, n, cause}
			return
		}
	}
	lh.list = append(lh.list, lostHold{g, n, cause})
	if len(lh.list) >= max(lh.pruneAt, minLostPrune) {
		lh.prune()
	}
	lh.n.Store(int32(len(lh.list)))
}

// prune drops the records of goroutines that have exited; mu is held. It
// dumps all goroutines, which stops the world for a moment: only a lock
// whose records have doubled pays for it.
func (lh *lostHolds) prune() {
	running := liveIDs(allStacks())
	kept := lh.list[:0]
	for _, r := range lh.list {
		if running[r.g] {
			kept = append(kept, r)
		}
	}
	clear(lh.list[len(kept):])
	lh.list = kept
	lh.pruneAt = 2 * len(kept)
}

// ForgetLost drops g's record on l, if any: g has just retaken l through a
// Cond wait, so earlier lost holds no longer explain a failed Unlock.
func (l *Lock) ForgetLost(g int64) {
	m := l.PeekMeta()
	if m == nil {
		return
	}
	lh := m.lost.Load()
	if lh == nil || lh.n.Load() == 0 {
		return
	}
	lh.mu.Lock()
	lh.take(g, true)
	lh.mu.Unlock()
}

// TakeLost is called by an Unlock by g that found l not held by g. If a
// Cond wait of g lost holds on l, it accounts for one of them and reports
// ok; then quiet says the goroutine is ending by runtime.Goexit (the
// Unlock should return without a panic, letting the exit go on) and
// otherwise cause is the retake's panic value, for the Unlock to panic
// with (see LostError).
func (l *Lock) TakeLost(g int64) (cause any, quiet, ok bool) {
	m := l.PeekMeta()
	if m == nil {
		return nil, false, false
	}
	lh := m.lost.Load()
	if lh == nil {
		return nil, false, false
	}
	lh.mu.Lock()
	defer lh.mu.Unlock()
	r, ok := lh.take(g, false)
	return r.cause, ok && r.cause == nil, ok
}

// lostHolds returns m's lost holds, making them on first use.
func (m *Meta) lostHolds() *lostHolds {
	if lh := m.lost.Load(); lh != nil {
		return lh
	}
	m.lost.CompareAndSwap(nil, new(lostHolds))
	return m.lost.Load()
}

// take finds g's record and uses up one hold of it (all of them with all).
func (lh *lostHolds) take(g int64, all bool) (lostHold, bool) {
	for i := range lh.list {
		r := lh.list[i]
		if r.g != g {
			continue
		}
		if r.n--; r.n <= 0 || all {
			lh.list[i] = lh.list[len(lh.list)-1]
			lh.list[len(lh.list)-1] = lostHold{}
			lh.list = lh.list[:len(lh.list)-1]
			lh.n.Store(int32(len(lh.list)))
		} else {
			lh.list[i] = r
		}
		return r, true
	}
	return lostHold{}, false
}

// LostError is the panic value of an Unlock that accounts for a hold its
// goroutine lost in a Cond wait: msg and the retake's panic value,
// matching ErrNotOwner and, if that value is an error, the error too (so
// errors.Is finds detect.ErrDeadlock and errors.As the
// *detect.DeadlockError).
func LostError(msg string, cause any) error {
	e := Misuse(fmt.Sprintf("%s: %v", msg, cause), ErrNotOwner)
	if err, ok := cause.(error); ok {
		e.Cause = err
	}
	return e
}
