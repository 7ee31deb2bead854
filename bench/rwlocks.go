package bench

import (
	"sync"

	deadlock "github.com/sasha-s/go-deadlock"

	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// rwOps holds, for one read-write lock type, a constructor and the loops
// of the read-write scenarios written against the concrete type, as
// lockOps does for the exclusive locks: the figures are what a caller of
// that type pays, with no interface call in the measured loop.
//
// Why not one generic loop: a type parameter instantiated with pointer
// types shares one GC shape, so its method calls go through a dictionary,
// an indirect call like an interface's. The loops are short; each type
// spells them out.
type rwOps struct {
	new func() any
	// rlock and lock take one read or write hold outside the measured
	// loops (the outer holds of a re-entry variant); runlock and unlock
	// give them back.
	rlock, runlock, lock, unlock func(lk any)
	readPairs, writePairs        func(lk any, n int)
	// mix runs one goroutine's share of an RWMix (see mixWorker).
	mix func(lk any, w *mixWorker)
}

// RWLocks returns the read-write locks of the read-write scenarios
// (ReadPairs, WritePairs, RWMix), sync.RWMutex first as their baseline:
// sync.RWMutex, mutex.RWMutex, monitor.RWMonitor at a first entry and
// re-entered at depth 2 ("monitor.RWMonitor.depth2": a goroutine already
// holding the monitor once, for reading in a read pair and for writing in
// a write pair) in each detection mode, and go-deadlock's RWMutex. Their
// Locks have no exclusive-lock scenarios: New is for Locks' locks only.
func RWLocks() []Lock {
	ls := []Lock{{Name: "sync.RWMutex", Type: "sync.RWMutex", Depth: 1, rw: &syncRWOps}}
	add := func(typ, name string, depth int, ops *rwOps) {
		for _, m := range modes {
			ls = append(ls, Lock{Name: name + "/detect=" + m.String(), Type: typ, Depth: depth, Locksmith: true, Mode: m, rw: ops})
		}
	}
	add("mutex.RWMutex", "mutex.RWMutex", 1, &mutexRWOps)
	add("monitor.RWMonitor", "monitor.RWMonitor", 1, &monitorRWOps)
	add("monitor.RWMonitor", "monitor.RWMonitor.depth2", 2, &monitorRWOps)
	return append(ls, Lock{Name: "go-deadlock.RWMutex", Type: "deadlock.RWMutex", Depth: 1, rw: &deadlockRWOps})
}

// RW reports whether l is one of RWLocks' locks.
func (l Lock) RW() bool { return l.rw != nil }

var syncRWOps = rwOps{
	new:     func() any { return new(sync.RWMutex) },
	rlock:   func(lk any) { lk.(*sync.RWMutex).RLock() },
	runlock: func(lk any) { lk.(*sync.RWMutex).RUnlock() },
	lock:    func(lk any) { lk.(*sync.RWMutex).Lock() },
	unlock:  func(lk any) { lk.(*sync.RWMutex).Unlock() },
	readPairs: func(lk any, n int) {
		m := lk.(*sync.RWMutex)
		for range n {
			m.RLock()
			m.RUnlock()
		}
	},
	writePairs: func(lk any, n int) {
		m := lk.(*sync.RWMutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	mix: func(lk any, w *mixWorker) {
		m := lk.(*sync.RWMutex)
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

var mutexRWOps = rwOps{
	new:     func() any { return new(mutex.RWMutex) },
	rlock:   func(lk any) { lk.(*mutex.RWMutex).RLock() },
	runlock: func(lk any) { lk.(*mutex.RWMutex).RUnlock() },
	lock:    func(lk any) { lk.(*mutex.RWMutex).Lock() },
	unlock:  func(lk any) { lk.(*mutex.RWMutex).Unlock() },
	readPairs: func(lk any, n int) {
		m := lk.(*mutex.RWMutex)
		for range n {
			m.RLock()
			m.RUnlock()
		}
	},
	writePairs: func(lk any, n int) {
		m := lk.(*mutex.RWMutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	mix: func(lk any, w *mixWorker) {
		m := lk.(*mutex.RWMutex)
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

var monitorRWOps = rwOps{
	new:     func() any { return new(monitor.RWMonitor) },
	rlock:   func(lk any) { lk.(*monitor.RWMonitor).RLock() },
	runlock: func(lk any) { lk.(*monitor.RWMonitor).RUnlock() },
	lock:    func(lk any) { lk.(*monitor.RWMonitor).Lock() },
	unlock:  func(lk any) { lk.(*monitor.RWMonitor).Unlock() },
	readPairs: func(lk any, n int) {
		m := lk.(*monitor.RWMonitor)
		for range n {
			m.RLock()
			m.RUnlock()
		}
	},
	writePairs: func(lk any, n int) {
		m := lk.(*monitor.RWMonitor)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	// A critical section of a depth-N row takes the monitor once and
	// re-enters it N-1 times, in the same mode, as a method calling
	// helpers that lock it again does.
	mix: func(lk any, w *mixWorker) {
		m := lk.(*monitor.RWMonitor)
		for range w.n {
			if w.next() {
				m.RLock()
				for range w.depth - 1 {
					m.RLock()
				}
				w.read()
				for range w.depth {
					m.RUnlock()
				}
			} else {
				m.Lock()
				for range w.depth - 1 {
					m.Lock()
				}
				w.write()
				for range w.depth {
					m.Unlock()
				}
			}
			w.between()
		}
	},
}

var deadlockRWOps = rwOps{
	new:     func() any { return new(deadlock.RWMutex) },
	rlock:   func(lk any) { lk.(*deadlock.RWMutex).RLock() },
	runlock: func(lk any) { lk.(*deadlock.RWMutex).RUnlock() },
	lock:    func(lk any) { lk.(*deadlock.RWMutex).Lock() },
	unlock:  func(lk any) { lk.(*deadlock.RWMutex).Unlock() },
	readPairs: func(lk any, n int) {
		m := lk.(*deadlock.RWMutex)
		for range n {
			m.RLock()
			m.RUnlock()
		}
	},
	writePairs: func(lk any, n int) {
		m := lk.(*deadlock.RWMutex)
		for range n {
			m.Lock()
			m.Unlock()
		}
	},
	mix: func(lk any, w *mixWorker) {
		m := lk.(*deadlock.RWMutex)
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
