package mutex

// QueueLen returns the number of goroutines parked in m's wait queue, so
// that tests can wait until a goroutine is queued without sleeping.
func QueueLen(m *Mutex) int { return m.l.QueueLen() }

// Starving reports whether m is in starvation mode.
func Starving(m *Mutex) bool { return m.l.Starving() }

// RWQueues returns the number of writers queued on rw's writer lock and
// of readers parked behind a writer.
func RWQueues(rw *RWMutex) (writers, readers int) {
	return rw.l.QueuedWriters(), rw.l.QueuedReaders()
}

// RWOverflowAllocated reports whether rw's map of readers beyond its
// inline slots exists.
func RWOverflowAllocated(rw *RWMutex) bool { return rw.l.OverflowAllocated() }

// RWReadersWaiting reports whether rw's state word says readers are
// queued behind a writer, which sends RLock and Unlock to their slow paths.
func RWReadersWaiting(rw *RWMutex) bool { return rw.l.ReadersWaiting() }

// RWDraining reports whether a writer of rw is waiting for readers to
// leave.
func RWDraining(rw *RWMutex) bool { return rw.l.Draining() }
