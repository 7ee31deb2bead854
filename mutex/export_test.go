package mutex

// QueueLen returns the number of goroutines parked in m's wait queue, so
// that tests can wait until a goroutine is queued without sleeping.
func QueueLen(m *Mutex) int { return m.l.QueueLen() }

// Starving reports whether m is in starvation mode.
func Starving(m *Mutex) bool { return m.l.Starving() }
