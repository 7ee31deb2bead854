package locktest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// TryLock checks TryLock's contract: it takes a free lock; by the holder
// it re-enters a reentrant lock (one hold more) and fails on one that is
// not, changing nothing, as Ruby's try_lock does; by another goroutine it
// fails and leaves the holder's holds as they were; after the last Unlock
// another goroutine takes the lock.
func TryLock(t *testing.T, c Lock) {
	m := c.New()
	require.True(t, m.TryLock(), "TryLock of a free %s", c.Name)
	assert.True(t, m.Owned())
	assert.Equal(t, 1, c.Holds(m))
	if c.Reentrant {
		require.True(t, m.TryLock(), "TryLock by the owner re-enters")
	} else {
		assert.False(t, m.TryLock(), "TryLock by the holder must fail, as Ruby's try_lock does")
	}
	assert.True(t, m.Owned())
	assert.Equal(t, c.depth(), c.Holds(m), "TryLock by the holder")

	other := make(chan bool)
	go func() { other <- m.TryLock() }()
	assert.False(t, testutil.Await(t, other, "TryLock by another goroutine"),
		"TryLock of a %s held by another goroutine", c.Name)
	assert.Equal(t, c.depth(), c.Holds(m), "a failed TryLock by another goroutine changed the holds")

	for range c.depth() {
		m.Unlock()
	}
	go func() {
		ok := m.TryLock()
		if ok {
			m.Unlock()
		}
		other <- ok
	}()
	assert.True(t, testutil.Await(t, other, "TryLock after the last Unlock"))
	assert.False(t, m.Locked())
}
