package detect_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
)

// TestOrderBypassSkipsReadOnlyLock: A then R(X), R(X) then B, B then C,
// with X never write-locked, is no dependency of A on B (a reader of X
// waits only for a writer, and X has none), and C then A closes no
// reportable cycle. Once X is collected it can never be write-locked:
// forgetting it must not leave an edge A -> B that makes C then A look
// like a cycle of write-locked locks.
func TestOrderBypassSkipsReadOnlyLock(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a := detecttest.Named("mutex", "A")
	b := detecttest.Named("mutex", "B")
	c := detecttest.Named("mutex", "C")
	x := namedRW("rwmutex", "X")
	xID := detect.LockID(x)

	a.Lock()
	x.RLock()
	x.RUnlock()
	a.Unlock()
	x.RLock()
	b.Lock()
	b.Unlock()
	x.RUnlock()
	lockPair(b, c)

	var collected atomic.Int32
	onCollect(t, x, &collected)
	x = nil
	waitForGC(t, "X collected and forgotten", func() bool {
		nodes, _ := detect.OrderGraph()
		return collected.Load() == 1 && !nodes[xID]
	})
	assert.False(t, detect.HasPath(a, b), "A ->* B through X, which was only ever read")

	lockPair(c, a)
	require.Empty(t, rec.All(detect.LockOrder), "a cycle through a lock never write-locked")
	require.Empty(t, detect.OrderConsistent())
}
