package monitor

// QueueLen returns the number of goroutines parked in m's wait queue, so
// that tests can wait until a goroutine is queued without sleeping.
func QueueLen(m *Monitor) int { return m.l.QueueLen() }

// RWQueues returns the number of writers queued on rw's writer lock and
// of readers parked behind a writer.
func RWQueues(rw *RWMonitor) (writers, readers int) {
	return rw.l.QueuedWriters(), rw.l.QueuedReaders()
}

// RWReadersWaiting reports whether rw's state word says readers are
// queued behind a writer, which sends RLock and Unlock to their slow paths.
func RWReadersWaiting(rw *RWMonitor) bool { return rw.l.ReadersWaiting() }

// RWDraining reports whether a writer of rw is waiting for readers to
// leave.
func RWDraining(rw *RWMonitor) bool { return rw.l.Draining() }

// RWOverflowAllocated reports whether rw's map of readers beyond its
// inline slots exists.
func RWOverflowAllocated(rw *RWMonitor) bool { return rw.l.OverflowAllocated() }

// ImplicitWaiters returns the number of goroutines waiting on m's implicit
// condition (Wait, WaitTimeout, WaitContext), or -1 before its first use.
// The owner creates the condition on first use; a caller must have synced
// with that goroutine since (FuzzMonitor does, through a channel) for the
// read of m.cond to be race-free.
func ImplicitWaiters(m *Monitor) int {
	if m.cond == nil {
		return -1
	}
	return m.cond.Waiters()
}
