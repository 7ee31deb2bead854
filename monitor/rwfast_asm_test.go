//go:build amd64 && gc && !race && !purego

package monitor

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TestRWAssemblyDefersToGo routes every RWMonitor call through the Go
// code, as Order mode or a missing fast goroutine ID does, and checks the
// hold counts, the upgrade refusal and the owner checks; then the same
// with the assembly, on the same lock, so that holds left by one path are
// what the other expects.
func TestRWAssemblyDefersToGo(t *testing.T) {
	var rw RWMonitor
	check := func(t *testing.T) {
		rw.RLock()
		rw.RLock()
		assert.Equal(t, 2, rw.ReadHoldCount())
		assert.True(t, errors.Is(testutil.Catch(rw.Lock).(error), ErrUpgrade))
		rw.RUnlock()
		assert.Equal(t, 1, rw.ReadHoldCount())
		rw.RUnlock()
		assert.Zero(t, rw.Readers())
		assert.True(t, errors.Is(testutil.Catch(rw.RUnlock).(error), ErrNotOwner))
		rw.Lock()
		rw.Lock()
		assert.Equal(t, 2, rw.WriteHoldCount())
		rw.RLock() // the writer takes a read hold
		rw.Unlock()
		rw.Unlock()
		assert.False(t, rw.Locked())
		assert.Equal(t, 1, rw.ReadHoldCount(), "downgraded")
		rw.RUnlock()
		assert.Zero(t, rw.Readers())
		assert.True(t, errors.Is(testutil.Catch(rw.Unlock).(error), ErrNotOwner))
		assert.Zero(t, rw.WriteHoldCount())
	}
	old := fastWord.Swap(0)
	t.Run("go", check)
	fastWord.Store(old)
	t.Run("assembly", check)
	fastWord.Store(0)
	rw.Lock()
	rw.RLock()
	fastWord.Store(old)
	rw.Lock()
	assert.Equal(t, 2, rw.WriteHoldCount())
	rw.Unlock()
	rw.RUnlock()
	fastWord.Store(0)
	rw.Unlock()
	fastWord.Store(old)
	assert.False(t, rw.Locked())
	assert.Zero(t, rw.Readers())
}
