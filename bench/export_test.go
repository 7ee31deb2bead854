package bench

import "sync"

// CustomLock returns a Lock of a type the catalogue does not have, for
// testing the scenario helpers' checks. Only the contended scenarios use
// it (they go through sync.Locker).
func CustomLock(name string, newLock func() sync.Locker) Lock {
	return Lock{Name: name, Type: name, Depth: 1, ops: &lockOps{new: newLock}}
}

// Observed returns l with a constructor that also hands every lock it
// makes to made, so that a test can look at the lock a scenario used once
// the scenario is done. The scenario's loops are l's own.
func Observed(l Lock, made func(sync.Locker)) Lock {
	ops := *l.ops
	newLock := ops.new
	ops.new = func() sync.Locker {
		lk := newLock()
		made(lk)
		return lk
	}
	l.ops = &ops
	return l
}

// rwLocker is what CustomRWLock's locks offer.
type rwLocker interface {
	sync.Locker
	RLock()
	RUnlock()
}

// CustomRWLock returns a read-write Lock of a type RWLocks does not have,
// called through an interface, for testing RWMix's checks.
func CustomRWLock(name string, newLock func() interface {
	sync.Locker
	RLock()
	RUnlock()
}) Lock {
	ops := &rwOps{
		new:     func() any { return newLock() },
		rlock:   func(lk any) { lk.(rwLocker).RLock() },
		runlock: func(lk any) { lk.(rwLocker).RUnlock() },
		lock:    func(lk any) { lk.(rwLocker).Lock() },
		unlock:  func(lk any) { lk.(rwLocker).Unlock() },
		mix: func(lk any, w *mixWorker) {
			m := lk.(rwLocker)
			for range w.n {
				if w.next() {
					m.RLock()
					w.read()
					m.RUnlock()
				} else {
					m.Lock()
					w.write()
					m.Unlock()
				}
				w.between()
			}
		},
	}
	return Lock{Name: name, Type: name, Depth: 1, rw: ops}
}
