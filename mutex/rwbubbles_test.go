//go:build go1.25

package mutex_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/mutex"
)

// A package-level RWMutex, as a program shares it between tests that run in
// testing/synctest bubbles and code outside any.
var sharedRW mutex.RWMutex

var sharedRWLock = locktest.RWBubbleLock{
	L:         &sharedRW,
	Reentrant: false,
	Queues:    func() (int, int) { return mutex.RWQueues(&sharedRW) },
	Draining:  func() bool { return mutex.RWDraining(&sharedRW) },
}

// Readers outside any bubble and a writer in one wake each other without
// the runtime's fatal error.
func TestSynctestRWMutexReadersOutsideWriterInside(t *testing.T) {
	locktest.RWReadersOutsideWriterInside(t, sharedRWLock)
}

// Writers outside any bubble and a reader in one wake each other without
// the runtime's fatal error.
func TestSynctestRWMutexWriterOutsideReadersInside(t *testing.T) {
	locktest.RWWriterOutsideReadersInside(t, sharedRWLock)
}

// A bubble's reader and writer waiting (not durably) for goroutines
// outside can be cancelled, and the lock stays usable.
func TestSynctestRWMutexNonDurableWaitsCancelled(t *testing.T) {
	locktest.RWNonDurableWaitsCancelled(t, sharedRWLock)
}

// Two bubbles and goroutines outside any hammer one package-level RWMutex
// at the same time: nothing dies or hangs, and writers stay exclusive.
func TestSynctestRWMutexSharedAcrossBubbles(t *testing.T) {
	locktest.RWSharedAcrossBubbles(t, sharedRWLock, 32, 4, 2000)
}

// After being shared (as in the tests above, then hammered), the RWMutex used by one bubble only parks that
// bubble's readers and writers durably again.
func TestSynctestRWMutexDurableAgainAfterSharing(t *testing.T) {
	locktest.RWReadersOutsideWriterInside(t, sharedRWLock)
	locktest.RWWriterOutsideReadersInside(t, sharedRWLock)
	locktest.RWSharedAcrossBubbles(t, sharedRWLock, 2, 4, 1000)
	locktest.RWDurableInOneBubble(t, sharedRWLock)
}

// A writer that held the lock while it ran synctest.Test, whose bubble
// deadlocked on it with readers queued, cannot wake those readers: its
// Unlock takes them off the queue and panics with ErrStranded, and the
// lock is back on its fast paths.
func TestSynctestRWMutexUnlockStrandsReaders(t *testing.T) {
	locktest.RWUnlockStrandsReaders(t, "TestSynctestRWMutexUnlockStrandsReaders", mutex.ErrStranded, func() locktest.StrandedRW {
		rw := new(mutex.RWMutex)
		return locktest.StrandedRW{
			L:              rw,
			Queues:         func() (int, int) { return mutex.RWQueues(rw) },
			ReadersWaiting: func() bool { return mutex.RWReadersWaiting(rw) },
		}
	})
}
