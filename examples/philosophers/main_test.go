package main

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/detect"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := out.String()
	assert.Contains(t, s, "== naive, one philosopher after another, Order mode: every one ate, nothing blocked\nthe detector's report (1):")
	assert.Contains(t, s, "WARNING: possible circular locking dependency detected")
	for i := range philosophers {
		assert.Contains(t, s, fmt.Sprintf("path %d: lock(fork %d); lock(fork %d);", i+1, i, (i+1)%philosophers))
	}
	assert.Contains(t, s, "== naive, all at once, each holding its left fork, Cycles mode\nthe detector's report (1), without the stacks:")
	assert.Contains(t, s, "Found one locksmith deadlock:")
	for i := range philosophers {
		assert.Regexp(t, fmt.Sprintf(`holds "fork %d" \(\*mutex\.Mutex 0x[0-9a-f]+\)\n(?:\s+locked at \S+\(\*table\)\.eat\n\s+\S+main\.go:\d+\n)?\s+waiting to lock "fork %d"`, i, (i+1)%philosophers), s)
	}
	assert.Contains(t, s, "meals: [1 1 1 1 1]\n\n== fixed")
	assert.Contains(t, s, "meals: [100 100 100 100 100]; detector reports: 0\n")
}

// TestNaiveInTurn checks the Order-mode report: one cycle through all five
// forks, each edge a philosopher's left-then-right.
func TestNaiveInTurn(t *testing.T) {
	reports, err := naiveInTurn(io.Discard)
	require.NoError(t, err)
	require.Len(t, reports, 1)
	r := reports[0]
	assert.Equal(t, detect.LockOrder, r.Kind)
	require.Len(t, r.Steps, philosophers)
	for i, s := range r.Steps {
		assert.Equal(t, fmt.Sprintf("fork %d", i), s.Holds.Name)
		assert.Equal(t, fmt.Sprintf("fork %d", (i+1)%philosophers), s.WaitsFor.Name)
	}
}

// TestNaiveTogether checks the Cycles-mode run: a deadlock of all five
// goroutines, found (not hung), and recovered from by retrying.
func TestNaiveTogether(t *testing.T) {
	deadlocks, reports, err := naiveTogether(io.Discard)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, deadlocks, 1)
	require.Len(t, reports, 1)
	assert.Equal(t, detect.Deadlock, reports[0].Kind)
	assert.Len(t, reports[0].Steps, philosophers, "a cycle of five goroutines")
}

func TestFixedTogetherRunsClean(t *testing.T) {
	reports, err := fixedTogether(io.Discard, 50)
	require.NoError(t, err)
	assert.Empty(t, reports)
}
