package monitor

// WaitQueueLen returns the number of goroutines parked in m's wait queue,
// so that FuzzMonitor can see a worker queue without sleeping.
func WaitQueueLen(m *Monitor) int { return m.l.QueueLen() }

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
