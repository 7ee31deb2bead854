package monitor

// QueueLen returns the number of goroutines parked in m's wait queue, so
// that tests can wait until a goroutine is queued without sleeping.
func QueueLen(m *Monitor) int { return m.l.QueueLen() }
