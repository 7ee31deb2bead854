package condvar

import (
	"sync"

	"github.com/locksmith-go/locksmith/internal/core"
)

// LockQueueLen returns the number of goroutines parked in the wait queue of
// l, a *mutex.Mutex or *monitor.Monitor, so that the fuzz targets can see a
// goroutine queue on the lock (a Cond waiter retaking it, say) without
// sleeping. It returns -1 for a lock that is not a locksmith lock.
func LockQueueLen(l sync.Locker) int {
	a, ok := core.Adapt(l)
	if !ok {
		return -1
	}
	return a.Lock.QueueLen()
}
