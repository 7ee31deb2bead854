package main

import (
	"bytes"
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

	// Cycles mode: one deadlock report naming both accounts, and recovery.
	assert.Contains(t, s, "== Cycles mode: transfers A->B and B->A at the same time\nthe detector's report (1):")
	assert.Contains(t, s, "Found one locksmith deadlock:")
	assert.Regexp(t, `goroutine \d+:\n\s+holds "account A" \(\*mutex\.Mutex 0x[0-9a-f]+\)\n(?:\s+locked at \S+\.transfer\n\s+\S+main\.go:\d+\n)?\s+waiting to lock "account B"`, s)
	assert.Regexp(t, `goroutine \d+:\n\s+holds "account B" \(\*mutex\.Mutex 0x[0-9a-f]+\)\n(?:\s+locked at \S+\.transfer\n\s+\S+main\.go:\d+\n)?\s+waiting to lock "account A"`, s)
	assert.Regexp(t, `\.transfer\n\s+\S+/examples/deadlock/main\.go:\d+`, s, "the stacks show the user's frames")
	assert.Contains(t, s, "both transfers done: A=80 B=120 (total 200)")

	// Order mode: the inversion is reported though nothing blocked.
	assert.Contains(t, s, "== Order mode: the same transfers, one after the other\nthe detector's report (1):")
	assert.Contains(t, s, "WARNING: possible circular locking dependency detected")
	assert.Regexp(t, `is trying to acquire lock:\n\s+"account A" .*\n\s+but it already holds lock:\n\s+"account B"`, s)
	assert.Contains(t, s, `path 1: lock(account A); lock(account B);`)
	assert.Contains(t, s, `path 2: lock(account B); lock(account A);`)
	assert.Contains(t, s, "both transfers done: A=80 B=120; this run never blocked")
}

// TestCyclesDemoRecovers checks the recovery itself: at least one
// LockContext returned a deadlock error (not a hang, not a panic), and the
// retries completed both transfers.
func TestCyclesDemoRecovers(t *testing.T) {
	deadlocks, err := cyclesDemo(io.Discard)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, deadlocks, 1)
}

func TestOrderDemoReportsTheInversion(t *testing.T) {
	reports, err := orderDemo(io.Discard)
	require.NoError(t, err)
	require.Len(t, reports, 1)
	r := reports[0]
	assert.Equal(t, detect.LockOrder, r.Kind)
	require.Len(t, r.Steps, 2)
	assert.Equal(t, "account A", r.Steps[0].Holds.Name)
	assert.Equal(t, "account B", r.Steps[0].WaitsFor.Name)
	assert.Equal(t, "account B", r.Steps[1].Holds.Name)
	assert.Equal(t, "account A", r.Steps[1].WaitsFor.Name)
}
