//go:build amd64 && gc && !race && !purego

package mutex

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TestRWAssemblyDefersToGo routes every RWMutex call through the Go code,
// as Order mode or a missing fast goroutine ID does, and checks that the
// RWMutex still works, refuses recursion and checks its owners; then the
// same with the assembly, on the same lock.
func TestRWAssemblyDefersToGo(t *testing.T) {
	var rw RWMutex
	check := func(t *testing.T) {
		rw.RLock()
		assert.True(t, rw.ReadOwned())
		assert.Equal(t, 1, rw.Readers())
		assert.True(t, errors.Is(testutil.Catch(rw.RLock).(error), ErrRecursiveLock), "recursive read")
		assert.True(t, errors.Is(testutil.Catch(rw.Lock).(error), ErrRecursiveLock), "upgrade")
		rw.RUnlock()
		assert.Zero(t, rw.Readers())
		assert.True(t, errors.Is(testutil.Catch(rw.RUnlock).(error), ErrNotOwner))
		rw.Lock()
		assert.True(t, rw.Owned())
		assert.True(t, errors.Is(testutil.Catch(rw.RLock).(error), ErrRecursiveLock), "read by the writer")
		rw.Unlock()
		assert.False(t, rw.Locked())
		assert.True(t, errors.Is(testutil.Catch(rw.Unlock).(error), ErrNotOwner))
		assert.False(t, rw.Locked())
	}
	old := fastWord.Swap(0)
	t.Run("go", check)
	fastWord.Store(old)
	t.Run("assembly", check)
}
