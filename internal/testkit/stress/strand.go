package stress

import (
	"fmt"
	"sync"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// strandedSet is the set of goroutines left blocked for good by
// strandReaders, whose wait-timeout reports are expected.
type strandedSet struct {
	mu sync.Mutex
	gs map[int64]bool
}

func (s *strandedSet) add(g int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gs == nil {
		s.gs = map[int64]bool{}
	}
	s.gs[g] = true
}

func (s *strandedSet) has(g int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gs[g]
}

func (s *strandedSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.gs)
}

// strandLock is the part of RWMutex and RWMonitor strandReaders uses.
type strandLock interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()
	Locked() bool
	Readers() int
}

// strandedRead is what each goroutine of strandReaders' bubble runs: it
// read-locks rw behind the holder that runs the bubble, a durable wait,
// and stays blocked for good.
func strandedRead(rw strandLock, s *strandedSet) {
	s.add(gid.Get())
	rw.RLock()
	rw.RUnlock()
}

// strandedReaders is the number of the bubble's goroutines that read-lock
// the lock in strandReaders, its main goroutine included.
const strandedReaders = 3

// strandReaders runs when Config.Strand is set, on an RWMutex and an
// RWMonitor: a goroutine holds the write lock while it runs a bubble
// (Strand) whose goroutines read-lock it, durably blocked, until
// synctest reports the deadlock; goroutines outside queue for the lock
// meanwhile, for reading and writing. The holder's Unlock must panic with
// ErrStranded, and the lock then go to those outside, keep its exclusion
// and end the round free.
func (r *round) strandReaders() {
	if r.cfg.Strand == nil {
		return
	}
	for _, k := range []struct {
		name string
		rw   strandLock
		prim int
	}{
		{"rwmutex", new(mutex.RWMutex), pRWMutex},
		{"rwmonitor", new(monitor.RWMonitor), pRWMonitor},
	} {
		g := &rwGuard{name: "stranding " + k.name}
		rw := k.rw
		held := make(chan struct{})
		r.spawn(g.name+" holder", func(w *worker) {
			rw.Lock()
			close(held)
			dead := r.cfg.Strand(func() {
				for range strandedReaders - 1 {
					go strandedRead(rw, r.stranded)
				}
				strandedRead(rw, r.stranded) // the bubble's last goroutine blocks: a deadlock
			})
			if dead == nil {
				w.anomalyf("the bubble of readers behind the holder did not deadlock")
			}
			w.expectPanic("Unlock that strands the bubble's readers", mutex.ErrStranded, rw.Unlock)
			w.ops[k.prim] += 2 + strandedReaders
		})
		for n := range r.cfg.Goroutines {
			r.spawn(fmt.Sprintf("%s outside #%d", g.name, n), func(w *worker) {
				<-held
				for range max(1, r.cfg.Ops/10) {
					if w.pct(50) {
						rw.RLock()
						g.read(w)
						rw.RUnlock()
					} else {
						rw.Lock()
						g.write(w)
						rw.Unlock()
					}
					w.ops[k.prim] += 2
				}
			})
		}
		r.atEnd(func() { g.check(r, rw.Locked(), rw.Readers()) })
	}
}
