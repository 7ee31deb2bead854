//go:build go1.25

package core

import (
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A writer of a bubble draining a lock shared with goroutines outside it:
// the last reader, outside the bubble, leaves just before the writer
// chooses how to park, and a goroutine outside the bubble comes in just
// after (the first half of enterRead: a slot claimed, the writer not yet
// seen), so that the writer's last look finds a reader and it parks. That
// goroutine then backs out, and its readerLeft is the only wakeup the
// writer gets, from outside its bubble: the writer must have parked where
// such a goroutine may wake it, not durably (where it is not woken, and
// the bubble, durably blocked, advances its clock to the test's timeout).
// The hooks run in the writer's goroutine; the readers are fake IDs, which
// domainOf places in no bubble.
func TestDrainNotDurableWithoutBubbleReader(t *testing.T) {
	var l RWLock
	const x, y = 1<<40 + 8, 1<<40 + 3 // home slots 0 and 3
	require.True(t, l.enterRead(x))
	claimed := make(chan int64, 1) // made outside the bubble
	testHookDrain = func(hl *RWLock, before bool) {
		if hl != &l {
			return
		}
		if before {
			if l.HoldsReadNow(x) {
				assert.True(t, l.RUnlock(x, true))
			}
			return
		}
		if l.slots[y&(rwSlots-1)].CompareAndSwap(0, y) {
			claimed <- gid.Get()
		}
	}
	defer func() { testHookDrain = nil }()

	backedOut := make(chan struct{})
	go func() { // outside the bubble: y backs out once the writer is parked
		defer close(backedOut)
		writer := strconv.FormatInt(testutil.Await(t, claimed, "writer draining"), 10)
		testutil.WaitFor(t, "writer parked in drain", func() bool {
			for _, s := range strings.Split(testutil.AllStacks(), "\n\n") {
				if strings.HasPrefix(s, "goroutine "+writer+" [") && strings.Contains(s, "(*RWLock).drain(") &&
					(strings.Contains(s, "[select") || strings.Contains(s, "[sync.Mutex.Lock")) {
					return true
				}
			}
			return false
		})
		l.slots[y&(rwSlots-1)].Store(0)
		l.readerLeft()
	}()

	synctest.Test(t, func(t *testing.T) {
		var g int64
		done := make(chan error, 1)
		go func() {
			g = gid.Get()
			done <- l.Lock(g, nil, ClassRWMutex)
		}()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(time.Hour):
			t.Error("writer parked durably, with no reader of its bubble left to wake it")
			testHookDrain = nil
			l.WakeDrainer() // from the bubble: let the writer finish
			require.NoError(t, <-done)
		}
		assert.Equal(t, g, l.Writer())
		require.True(t, l.Unlock(g))
	})
	testutil.Await(t, backedOut, "backing out")
	assert.Zero(t, l.Readers())
	assert.False(t, l.Draining())
}
