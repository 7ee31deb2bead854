package core

import (
	"sync"
	"sync/atomic"
)

// The registry of blocked goroutines: every parked waiter, sharded by
// goroutine ID, for the wait-for walk (cycles.go), Dump and the watchdog.

const shards = 64

type shard struct {
	mu sync.Mutex
	m  map[int64]*waiter
	_  [40]byte // keep shards on separate cache lines
}

var (
	registry [shards]shard
	epochs   atomic.Uint64
)

func shardOf(g int64) *shard { return &registry[uint64(g)%shards] }

func register(w *waiter) {
	s := shardOf(w.g)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[int64]*waiter)
	}
	w.epoch = epochs.Add(1)
	s.m[w.g] = w
	s.mu.Unlock()
}

func unregister(w *waiter) {
	s := shardOf(w.g)
	s.mu.Lock()
	if s.m[w.g] == w {
		delete(s.m, w.g)
	}
	s.mu.Unlock()
}

// wait is a snapshot of one registered wait.
type wait struct {
	g      int64
	lock   *Lock
	class  *Class
	epoch  uint64
	rw     *RWLock
	awaits uint8
}

func waitOf(w *waiter) wait {
	return wait{g: w.g, lock: w.lock, class: w.class, epoch: w.epoch, rw: w.rw, awaits: w.awaits}
}

// waitingOn returns what g is blocked on, with the registration's epoch.
func waitingOn(g int64) (wait, bool) {
	s := shardOf(g)
	s.mu.Lock()
	w := s.m[g]
	var out wait
	if w != nil {
		out = waitOf(w)
	}
	s.mu.Unlock()
	return out, w != nil
}

// WaitInfo describes one goroutine blocked on a locksmith lock.
type WaitInfo struct {
	G     int64
	Lock  *Lock
	Class *Class
	Since int64 // on the Now clock
	// Read: the goroutine waits for a read lock. Drain: it holds the
	// write lock of an RWLock and waits for the readers to leave.
	Read  bool
	Drain bool
	w     *waiter
}

// MarkTimedOut records that a wait-timeout report was made for this wait
// and reports whether this call was the first to do so.
func (wi WaitInfo) MarkTimedOut() bool { return wi.w.timed.CompareAndSwap(false, true) }

// Waiting calls f for every goroutine blocked on a locksmith lock, without
// holding any registry lock while f runs.
func Waiting(f func(WaitInfo)) {
	var all []WaitInfo
	for i := range registry {
		s := &registry[i]
		s.mu.Lock()
		for _, w := range s.m {
			all = append(all, WaitInfo{G: w.g, Lock: w.lock, Class: w.class, Since: w.start,
				Read: w.awaits == waitRead, Drain: w.awaits == waitDrain, w: w})
		}
		s.mu.Unlock()
	}
	for _, wi := range all {
		f(wi)
	}
}
