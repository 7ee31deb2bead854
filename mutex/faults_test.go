package mutex_test

// Faults: a cancellation at any point of a wait.

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
)

// LockContext cancelled before the call, while queued and racing the
// handoff, in every detection mode.
func TestFaultMutexLockContextCancelledAtEveryPoint(t *testing.T) {
	locktest.LockContextCancelledAtEveryPoint(t, timedMutex)
}
