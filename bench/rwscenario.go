package bench

import (
	"fmt"
	"sync"
)

// ReadPairs does n RLock/RUnlock pairs on a new lock of l's kind (one of
// RWLocks) from one goroutine. For a Depth above 1 the goroutine first
// takes Depth-1 read holds, so that each measured pair is a re-entrant
// read at depth Depth. The loop calls the concrete type's methods. The
// caller configures l (Lock.Configure).
func ReadPairs(l Lock, n int) Result {
	return rwPairs(l, n, l.rw.rlock, l.rw.runlock, l.rw.readPairs)
}

// WritePairs does n Lock/Unlock pairs on a new lock of l's kind (one of
// RWLocks), after Depth-1 write holds as ReadPairs does read holds.
func WritePairs(l Lock, n int) Result {
	return rwPairs(l, n, l.rw.lock, l.rw.unlock, l.rw.writePairs)
}

func rwPairs(l Lock, n int, hold, release func(any), pairs func(any, int)) Result {
	lk := l.rw.new()
	for range l.Depth - 1 {
		hold(lk)
	}
	c := startClock()
	pairs(lk, n)
	r := c.stop(int64(n))
	for range l.Depth - 1 {
		release(lk)
	}
	return r
}

// RWLoad is a read-mostly contended workload: goroutines sharing one
// read-write lock, each operation a read (RLock, Inside work reading the
// shared state, RUnlock) with probability ReadPercent/100 and otherwise a
// write (Lock, Inside work updating it, Unlock), with Outside work
// between operations.
type RWLoad struct {
	Goroutines  int
	Ops         int // operations in all, split evenly between the goroutines
	ReadPercent int // 0 to 100
	Inside      Work
	Outside     Work
}

// RWMix runs ld on a new lock of l's kind (one of RWLocks). Each
// goroutine draws reads and writes from its own xorshift generator with a
// fixed seed, so every lock sees the same sequence of operations. A
// critical section takes Depth holds of its mode (for RWMonitor's
// re-entry row: a first entry and a re-entry). The goroutines start
// together; the clock runs from their start to the last one's end.
//
// The writes update a plain variable and count themselves in another; a
// read checks that the variable did not change while it held the lock.
// RWMix returns an error if the count is not the number of writes done
// (two writers overlapped) or a read saw a write (a writer overlapped a
// reader); the race detector, when on, reports either.
func RWMix(l Lock, ld RWLoad) (Result, error) {
	if ld.ReadPercent < 0 || ld.ReadPercent > 100 {
		return Result{}, fmt.Errorf("bench: read percentage %d out of 0-100", ld.ReadPercent)
	}
	g := max(1, ld.Goroutines)
	lk := l.rw.new()
	var (
		shared uint64 // guarded by lk
		count  int64  // guarded by lk: writes done
		start  = make(chan struct{})
		wg     sync.WaitGroup
		ws     = make([]*mixWorker, g)
	)
	for i := range g {
		n := ld.Ops / g
		if i < ld.Ops%g {
			n++
		}
		w := &mixWorker{
			n: n, depth: l.Depth, readPermille: uint64(ld.ReadPercent) * 10,
			rng:    uint64(i)*0x9e3779b97f4a7c15 + 1,
			inside: ld.Inside, outside: ld.Outside,
			shared: &shared, count: &count,
		}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l.rw.mix(lk, w)
			Sink.Add(w.local)
		}()
	}
	c := startClock()
	close(start)
	wg.Wait()
	r := c.stop(int64(ld.Ops))
	Sink.Add(shared)
	var writes, torn int64
	for _, w := range ws {
		writes += w.writes
		torn += w.torn
	}
	if count != writes {
		return r, fmt.Errorf("bench: %s lost updates: %d writes counted, %d done", l.Name, count, writes)
	}
	if torn != 0 {
		return r, fmt.Errorf("bench: %s let a writer in beside a reader: %d reads saw the state change", l.Name, torn)
	}
	return r, nil
}

// mixWorker is one goroutine of an RWMix: its share of the operations, its
// random stream and the work it does inside and between critical
// sections. rwOps.mix calls the lock; the worker's methods are the same
// for every lock.
type mixWorker struct {
	n            int
	depth        int
	readPermille uint64
	rng          uint64
	inside       Work
	outside      Work
	shared       *uint64 // guarded by the lock
	count        *int64  // guarded by the lock
	local        uint64  // this goroutine's own state
	writes, torn int64   // this goroutine's writes, and reads that saw a change
}

// next draws the next operation: true for a read.
func (w *mixWorker) next() bool {
	w.rng ^= w.rng << 13
	w.rng ^= w.rng >> 7
	w.rng ^= w.rng << 17
	return w.rng%1000 < w.readPermille
}

// read is a read-side critical section: work that depends on the shared
// state, which must not change meanwhile.
func (w *mixWorker) read() {
	s := *w.shared
	w.local ^= w.inside.Do(s ^ w.local)
	if *w.shared != s {
		w.torn++
	}
}

// write is a write-side critical section.
func (w *mixWorker) write() {
	*w.shared = w.inside.Do(*w.shared + w.local)
	*w.count++
	w.writes++
}

func (w *mixWorker) between() { w.local = w.outside.Do(w.local) }
