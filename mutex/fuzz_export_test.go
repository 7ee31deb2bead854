package mutex

// WaitQueueLen returns the number of goroutines parked in m's wait queue,
// so that FuzzMutex can see a worker queue without sleeping.
func WaitQueueLen(m *Mutex) int { return m.l.QueueLen() }
