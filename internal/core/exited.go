package core

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/internal/rt"
)

// The exited-holder check: a wait for a lock whose holder has exited can
// never end. Only the holder may release our locks, Go runs no code at a
// goroutine's exit, and a goroutine ID is not given out again (a C
// thread's callbacks share one, see package gid: a thread that exits
// leaves the lock to the goroutine of its callbacks, which then runs no
// code until another thread's callback, so it counts as exited). There
// is no cycle for the walk to find, so in Cycles and Order modes the check
// fails such a wait instead, as a deadlock: its Lock panics with the
// engine's error, LockContext returns it, LockTimeout returns false.
//
// Whether a goroutine still runs is known only from a dump of every
// goroutine's stack (runtime.Stack(all), which stops the world for a
// moment), too dear for every park. So the check runs on a timer, every
// exitedPeriod while any goroutine is registered as blocked, outside
// bubbles, and looks only at waits that have lasted exitedPeriod: a wait
// behind a holder that has exited fails within 2*exitedPeriod of the later
// of its start and the holder's exit (docs/detection.md states the bound),
// in a program of up to perPeriod goroutines (see dumpSpacing). One dump
// serves every such wait, and none is taken while no such wait has a
// holder that is not itself blocked on one of our locks (a registered
// waiter runs). A short wait costs nothing.
//
// A holder missing from the dump has exited (it was the holder before the
// dump began, so it existed then). The wait is failed only if, after the
// dump, the waiter still has the registration it had before and still
// waits for that holder: a holder that released the lock and then exited
// is not reported, and one that exited holding it holds it for good.
//
// The check wakes the waiter as its context would: a queued waiter is
// dequeued under its queue's mutex and given its token, marked cancelled
// with errHolderExited; a writer waiting for readers is posted to. It
// never wakes a waiter parked durably in a bubble, which only its bubble
// may wake: such a wait is durable because its holder wakes nobody (see
// holderIn), and synctest reports the bubble's deadlock itself.
//
// Rejected alternatives:
//   - A dump at every park whose wait-for walk ends at a goroutine that
//     is not blocked: that is every contended park, and a dump costs
//     far more than a park.
//   - A timer per wait: an allocation and a timer operation on every
//     park, and inside a bubble a timer of the bubble, which would keep
//     a deadlocked bubble advancing fake time instead of failing.
//   - One look per wait: a holder alive at the look may exit afterwards,
//     still holding the lock (the usual bug: a return that skips Unlock
//     after a long computation).
const exitedPeriod = 500 * time.Millisecond

// errHolderExited, as a waiter's cancelled, says that the check found its
// holder exited; the waiter turns it into the engine's error (cancelErr).
var errHolderExited = errors.New("locksmith: the lock's holder has exited")

// exitedArmed is set while the check's timer is scheduled or running.
var exitedArmed atomic.Bool

// armExited schedules the check unless it is scheduled. Only a goroutine
// outside bubbles may call it: a timer started in a bubble is the
// bubble's.
//
// Every park's first calls it: exitedArmed's value is all it reads, hidden
// from the race detector (see racehb_race.go).
func armExited() {
	RaceHide()
	if !exitedArmed.Load() && exitedArmed.CompareAndSwap(false, true) {
		time.AfterFunc(exitedPeriod, checkExited)
	}
	RaceShow()
}

// testHookExitedDump, if set (by tests), runs in checkExited before each
// dump. Atomic: the check's timer may be running when a test sets it.
var testHookExitedDump atomic.Pointer[func()]

// A suspect is a wait old enough to check, and the holders it waits for
// that are not themselves blocked.
type suspect struct {
	g       int64
	e       entry
	holders []int64
}

// perPeriod is how many goroutines the check dumps every exitedPeriod at
// most. A dump stops the world for as long as it takes, which grows with
// the number of goroutines: with more, the dumps are spaced in proportion
// (dumpSpacing), so that their share of the time stays about the same,
// and the delay grows past the bound (docs/detection.md says so). The
// count of goroutines, not a dump's measured time, sets the spacing: on a
// loaded machine a dump's wall time says more about the load than about
// the dump.
const perPeriod = 2000

// dumpSpacing returns how long the check leaves between two dumps with n
// goroutines: 0 (every run may dump) up to perPeriod.
func dumpSpacing(n int) time.Duration {
	if n <= perPeriod {
		return 0
	}
	return time.Duration(n) * exitedPeriod / perPeriod
}

// tooSoon reports whether a dump now, with n goroutines, would come too
// soon after the one made at last (zero: none): within dumpSpacing(n),
// less half a period for the timer's lateness.
func tooSoon(last time.Time, n int) bool {
	return !last.IsZero() && time.Since(last) < dumpSpacing(n)-exitedPeriod/2
}

// lastDump is when the check's last dump began; only the check touches
// it, one run at a time (each run schedules the next when it ends).
var lastDump time.Time

// checkExited is one run of the check. It schedules the next while any
// goroutine is registered as blocked; otherwise the chain ends, and the
// next goroutine to park outside bubbles starts it again.
func checkExited() {
	if Mode() == ModeOff || !anyRegistered() {
		exitedArmed.Store(false)
		// A goroutine that registered after the look and found the chain
		// armed has not started it: look again.
		if Mode() != ModeOff && anyRegistered() {
			armExited()
		}
		return
	}
	defer time.AfterFunc(exitedPeriod, checkExited)
	suspects := oldWaits(nanotime() - int64(exitedPeriod))
	if len(suspects) == 0 || tooSoon(lastDump, runtime.NumGoroutine()) {
		return
	}
	if f := testHookExitedDump.Load(); f != nil {
		(*f)()
	}
	lastDump = time.Now()
	live := liveIDs(allStacks())
	var found []exitedWait
	for _, s := range suspects {
		for _, h := range s.holders {
			if !live[h] {
				if w, ok := s.e.resolve(s.g); ok {
					found = append(found, exitedWait{w, h})
				}
				break
			}
		}
	}
	if len(found) == 0 {
		return
	}
	// A second dump, taken while found holds the waits' locks: a waiter
	// that Go's goroutine leak detection marked leaked before must never
	// be woken (the runtime throws), and none can be marked while the
	// locks are held here, by a running goroutine.
	leaked := leakedIDs(allStacks())
	for _, f := range found {
		if !leaked[f.w.g] && stillWaits(f.w, f.h) {
			failExited(f.w, f.h)
		}
	}
}

// exitedWait is a wait, its lock resolved, found waiting for h, which has
// exited.
type exitedWait struct {
	w wait
	h int64
}

// oldWaits returns the registered waits that began before since and wait
// for some holder not registered as blocked. It reads each lock's words
// without making the lock reachable (entry.peekHolders): it runs unasked,
// on a timer, perhaps while a collection marks, and only the waits whose
// holder has exited need their locks (checkExited resolves those).
func oldWaits(since int64) []suspect {
	var old []suspect
	for i := range registry {
		s := &registry[i]
		s.lock()
		s.t.each(func(g int64, e entry) (entry, bool) {
			if e.start <= since {
				old = append(old, suspect{g: g, e: e})
			}
			return e, false
		})
		s.unlock()
	}
	out := old[:0]
	for _, s := range old {
		for _, h := range s.e.peekHolders(s.g) {
			if !registered(h) {
				s.holders = append(s.holders, h)
			}
		}
		if len(s.holders) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// registered reports whether g is registered as blocked.
func registered(g int64) bool {
	s := shardOf(g)
	s.lock()
	_, ok := s.t.get(g)
	s.unlock()
	return ok
}

// anyRegistered reports whether some goroutine is registered as blocked.
func anyRegistered() bool {
	for i := range registry {
		s := &registry[i]
		s.lock()
		n := s.t.len()
		s.unlock()
		if n > 0 {
			return true
		}
	}
	return false
}

// stillWaits reports whether the wait w still has its registration and
// waits for h.
func stillWaits(w wait, h int64) bool {
	cur, ok := waitingOn(w.g)
	return ok && cur == w && edge(w, h)
}

// failExited ends the wait w, found waiting for h, which has exited: see
// the top of the file. A waiter that is between parks (woken, or not yet
// queued) is left alone; the next run finds it again. The waiter is found
// where it is queued, by its registration's epoch: the registry holds no
// waiter (see waits.go).
func failExited(w wait, h int64) {
	switch w.awaits {
	case waitLock:
		failIn(&w.lock.mu, &w.lock.q, w, w.lock.remove, h)
	case waitRead:
		failIn(&w.rw.rmu, &w.rw.rq, w, w.rw.runlink, h)
	case waitDrain:
		d := w.rw.drainer.Load()
		if d == nil || d.g != w.g || d.epoch != w.epoch {
			return
		}
		switch d.pmode.Load() {
		case parkChan:
			d.exited.Store(h)
			d.post(false)
		case parkSema:
			d.exited.Store(h)
			d.post(true)
		}
	}
}

// failIn fails w's waiter, if it is still queued on q, under mu.
func failIn(mu *sync.Mutex, q *waitList, w wait, remove func(*waiter), h int64) {
	mu.Lock()
	var x *waiter
	for x = q.head; x != nil && (x.g != w.g || x.epoch != w.epoch); x = x.next {
	}
	mu.Unlock()
	if x != nil {
		x.failQueued(mu, remove, h)
	}
}

// failQueued dequeues w, queued under mu (remove unlinks it), unless it
// parks durably in a bubble, and gives it its token marked cancelled with
// errHolderExited: cancelQueued for a park on ch too, which only a
// goroutine outside bubbles may wake, as the check's timer is.
func (w *waiter) failQueued(mu *sync.Mutex, remove func(*waiter), h int64) {
	mu.Lock()
	if !w.inq || w.durable {
		mu.Unlock()
		return
	}
	unregister(w)
	remove(w)
	w.cancelled = errHolderExited
	w.exited.Store(h)
	sema := w.sema
	mu.Unlock()
	w.wake(sema)
}

// cancelErr returns the error of a waiter dequeued by a callback or by
// the exited-holder check (parkCancelled).
func (w *waiter) cancelErr() error {
	if w.cancelled == errHolderExited {
		return w.exitedError(w.exited.Load())
	}
	return w.cancelled
}

// drainExited returns the error of a draining writer that the check found
// waiting for h, a reader that has exited still holding its read lock, or
// nil.
func (l *RWLock) drainExited(w *waiter) error {
	if h := w.exited.Load(); h != 0 && l.holdsReadNow(h) {
		return w.exitedError(h)
	}
	return nil
}

// exitedError turns w's wait for h, which has exited holding the lock,
// into the error to return, through the engine.
func (w *waiter) exitedError(h int64) error {
	hop := Hop{G: w.g, Lock: w.lock, Class: w.class, Read: w.awaits == waitRead, HolderRead: w.awaits == waitDrain}
	if engine == nil {
		return errors.New("locksmith: deadlock: the lock's holder has exited") // only without package detect, which every lock package links
	}
	return engine.Exited(hop, h)
}

// leakedIDs returns the IDs of the goroutines of dump, an allStacks
// result, that Go's goroutine leak detection marked leaked ("goroutine N
// [chan receive (leaked)]:").
func leakedIDs(dump []byte) map[int64]bool { return headerIDs(dump, []byte(" (leaked)")) }

// liveIDs returns the IDs of the goroutines in dump, an allStacks result:
// those of its header lines ("goroutine N [...]:"; no other line of a
// dump starts with "goroutine ").
func liveIDs(dump []byte) map[int64]bool { return headerIDs(dump, []byte(" [")) }

// headerIDs returns the IDs of dump's header lines that contain mark.
func headerIDs(dump, mark []byte) map[int64]bool {
	ids := map[int64]bool{}
	eachLine(dump, func(line []byte) bool {
		if g, ok := rt.GoroutineID(line); ok && bytes.Contains(line, mark) {
			ids[g] = true
		}
		return true
	})
	return ids
}

// eachLine calls f with each line of dump, without its newline, until f
// returns false.
func eachLine(dump []byte, f func(line []byte) bool) {
	for len(dump) > 0 {
		line := dump
		if i := bytes.IndexByte(dump, '\n'); i >= 0 {
			line, dump = dump[:i], dump[i+1:]
		} else {
			dump = nil
		}
		if !f(line) {
			return
		}
	}
}
