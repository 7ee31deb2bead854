//go:build race

package condvar

// Under the race detector, a ticket wait's wakeup gets an edge the
// detector can see: the runtime's notify list that parks it is not
// instrumented, so without it a write made before Signal by a goroutine
// that does not hold the lock would be reported as racing with a read
// after Wait, though Signal synchronizes before the Wait returns. A
// queued wait has its edge already (the CompareAndSwap on waiter.st and
// the load after the park).

// raceRelease is called by Signal and Broadcast before they notify.
func (c *Cond) raceRelease() { c.raceSeq.Add(1) }

// raceAcquire is called by a ticket wait after it wakes.
func (c *Cond) raceAcquire() { c.raceSeq.Load() }
