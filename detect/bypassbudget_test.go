package detect_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
)

// TestOrderBypassBudget: forgetting a lock nested under n locks and over
// n others would bypass it with n*n edges; the budget stops at MaxBypass
// of them, every one of them an ordered edge from a lock below to a lock
// above, and the order stays consistent. A bypass kept carries the
// order: nesting its ends the other way round is reported.
func TestOrderBypassBudget(t *testing.T) {
	n := 1
	for n*n <= detect.MaxBypass {
		n++
	}
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	x := detecttest.Named("mutex", "X")
	xID := detect.LockID(x)
	preds := make([]sync.Locker, n)
	succs := make([]sync.Locker, n)
	id := map[uint64]string{}
	for i := range n {
		preds[i] = detecttest.Named("mutex", fmt.Sprintf("P%d", i))
		succs[i] = detecttest.Named("mutex", fmt.Sprintf("S%d", i))
		id[detect.LockID(preds[i])] = "P"
		id[detect.LockID(succs[i])] = "S"
		lockPair(preds[i], x)
		lockPair(x, succs[i])
	}
	var collected atomic.Int32
	onCollect(t, x, &collected)
	x = nil
	waitForGC(t, "X collected and forgotten", func() bool {
		nodes, _ := detect.OrderGraph()
		return collected.Load() == 1 && !nodes[xID]
	})
	require.Empty(t, detect.OrderConsistent())
	_, edges := detect.OrderGraph()
	var kept *detect.EdgeState
	bypasses := 0
	for _, e := range edges {
		if id[e.From] == "" {
			continue
		}
		require.True(t, e.Bypass && e.Ordered && id[e.From] == "P" && id[e.To] == "S", "%+v", e)
		bypasses++
		kept = &e
	}
	assert.Equal(t, detect.MaxBypass, bypasses, "of %d paths through X", n*n)

	var p, s sync.Locker
	for i := range n {
		if detect.LockID(preds[i]) == kept.From {
			p = preds[i]
		}
		if detect.LockID(succs[i]) == kept.To {
			s = succs[i]
		}
	}
	lockPair(s, p)
	assert.Len(t, rec.All(detect.LockOrder), 1, "a bypass kept, nested the other way round")
}
