//go:build go1.25

package monitor_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/monitor"
)

// A package-level RWMonitor, as a program shares it between tests that run in
// testing/synctest bubbles and code outside any.
var sharedRW monitor.RWMonitor

var sharedRWLock = locktest.RWBubbleLock{
	L:         &sharedRW,
	Reentrant: true,
	Queues:    func() (int, int) { return monitor.RWQueues(&sharedRW) },
	Draining:  func() bool { return monitor.RWDraining(&sharedRW) },
}

// Readers outside any bubble and a writer in one wake each other without
// the runtime's fatal error.
func TestSynctestRWMonitorReadersOutsideWriterInside(t *testing.T) {
	locktest.RWReadersOutsideWriterInside(t, sharedRWLock)
}

// Writers outside any bubble and a reader in one wake each other without
// the runtime's fatal error.
func TestSynctestRWMonitorWriterOutsideReadersInside(t *testing.T) {
	locktest.RWWriterOutsideReadersInside(t, sharedRWLock)
}

// A bubble's reader and writer waiting (not durably) for goroutines
// outside can be cancelled, and the lock stays usable.
func TestSynctestRWMonitorNonDurableWaitsCancelled(t *testing.T) {
	locktest.RWNonDurableWaitsCancelled(t, sharedRWLock)
}

// Two bubbles and goroutines outside any hammer one package-level RWMonitor
// at the same time: nothing dies or hangs, and writers stay exclusive.
func TestSynctestRWMonitorSharedAcrossBubbles(t *testing.T) {
	locktest.RWSharedAcrossBubbles(t, sharedRWLock, 32, 4, 2000)
}

// After being shared (as in the tests above, then hammered), the RWMonitor used by one bubble only parks that
// bubble's readers and writers durably again.
func TestSynctestRWMonitorDurableAgainAfterSharing(t *testing.T) {
	locktest.RWReadersOutsideWriterInside(t, sharedRWLock)
	locktest.RWWriterOutsideReadersInside(t, sharedRWLock)
	locktest.RWSharedAcrossBubbles(t, sharedRWLock, 2, 4, 1000)
	locktest.RWDurableInOneBubble(t, sharedRWLock)
}

// A writer that held the lock while it ran synctest.Test, whose bubble
// deadlocked on it with readers queued, cannot wake those readers: its
// Unlock takes them off the queue and panics with ErrStranded, and the
// lock is back on its fast paths.
func TestSynctestRWMonitorUnlockStrandsReaders(t *testing.T) {
	locktest.RWUnlockStrandsReaders(t, "TestSynctestRWMonitorUnlockStrandsReaders", monitor.ErrStranded, func() locktest.StrandedRW {
		rw := new(monitor.RWMonitor)
		return locktest.StrandedRW{
			L:              rw,
			Queues:         func() (int, int) { return monitor.RWQueues(rw) },
			ReadersWaiting: func() bool { return monitor.RWReadersWaiting(rw) },
		}
	})
}
