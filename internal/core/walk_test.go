package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalkChain: the cycle check on a chain of single-owner waits that
// does not come back allocates nothing, and closing the chain into a
// cycle is found.
func TestWalkChain(t *testing.T) {
	var l1, l2 Lock
	g1, g2, g3 := ids.Add(1), ids.Add(1), ids.Add(1)
	require.True(t, l1.FastAcquire(g1))
	require.True(t, l2.FastAcquire(g2))
	defer l1.Release(g1)
	defer l2.Release(g2)
	// g3 waits for l1 (held by g1), g1 waits for l2 (held by g2).
	w1 := &waiter{g: g1, lock: &l2, class: ClassMutex}
	register(w1)
	defer unregister(w1)
	w3 := &waiter{g: g3, lock: &l1, class: ClassMutex}
	register(w3)
	defer unregister(w3)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if checkCycle(w3) != nil {
			panic("no cycle here")
		}
	}))

	// g2 waits for l1 (held by g1): g1 -> g2 -> g1 is a cycle, found
	// from g2, who registered last.
	w2 := &waiter{g: g2, lock: &l1, class: ClassMutex}
	register(w2)
	defer unregister(w2)
	c := checkCycle(w2)
	require.NotNil(t, c)
	cycle := c.Hops
	require.Len(t, cycle, 2)
	assert.Equal(t, g2, cycle[0].G)
	assert.Same(t, &l1, cycle[0].Lock)
	assert.Equal(t, g1, cycle[1].G)
	assert.Same(t, &l2, cycle[1].Lock)
	assert.Nil(t, checkCycle(w1), "only the goroutine that registered last is refused")
}
