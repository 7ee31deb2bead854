package core

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

// ReadersWaiting reports whether the state word says readers are queued
// behind a writer: while it does, every RLock and Unlock takes its slow
// path.
func (l *RWLock) ReadersWaiting() bool { return l.rs.Load()&rsReadersWaiting != 0 }

// QueuedWriters returns the number of writers parked on the writer lock.
func (l *RWLock) QueuedWriters() int { return l.w.QueueLen() }

// OverflowAllocated reports whether the overflow map exists (for the
// memory tests).
func (l *RWLock) OverflowAllocated() bool {
	l.ovmu.Lock()
	defer l.ovmu.Unlock()
	return l.ov != nil
}

// HoldsReadNow reports whether g holds l for reading; unlike HoldsRead it
// may be called from any goroutine (package detect's sweeper).
func (l *RWLock) HoldsReadNow(g int64) bool { return l.holdsReadNow(g) }
