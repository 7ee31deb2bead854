package deadlock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/deadlock"
)

// A lock left held by a goroutine that has exited may still be unlocked
// by another goroutine, as sync allows: a waiter behind it must not fail
// when the detector finds the holder exited (a Deadlock for mutex.Mutex,
// whose holder alone may unlock). It waits for the hand-off instead, and
// gets the lock when another goroutine unlocks. For a Mutex, and an
// RWMutex's writer and reader behind an exited writer.
func TestExitedHolderHandedOff(t *testing.T) {
	for _, kind := range []string{"Mutex", "RWMutex.Lock", "RWMutex.RLock"} {
		t.Run(kind, func(t *testing.T) {
			h := setup(t, 0, true)
			var mu deadlock.Mutex
			var rw deadlock.RWMutex
			lock, unlock, wait := mu.Lock, mu.Unlock, func() { mu.Lock(); mu.Unlock() }
			switch kind {
			case "RWMutex.Lock":
				lock, unlock, wait = rw.Lock, rw.Unlock, func() { rw.Lock(); rw.Unlock() }
			case "RWMutex.RLock":
				lock, unlock, wait = rw.Lock, rw.Unlock, func() { rw.RLock(); rw.RUnlock() }
			}
			require.Nil(t, onOther(lock)) // its goroutine returns holding the lock
			w := spawn(wait)
			waitBlocked(t, w, "deadlock.(*handoff).await") // past the detector's check
			require.Nil(t, onOther(unlock))
			require.Nil(t, w.wait(t))
			assert.Zero(t, h.count(), h.log.String())
		})
	}
}
