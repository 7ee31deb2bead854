package testutil

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestProgressTotal(t *testing.T) {
	p := NewProgress(3)
	assert.Zero(t, p.Total())
	p.Step(0)
	p.Step(2)
	p.Step(2)
	assert.Equal(t, int64(3), p.Total())
}

// TestAwaitProgress: the wait fails once progress stops for the stall
// time, never while it advances, however long the run, and fails at the
// deadline even while it advances.
func TestAwaitProgress(t *testing.T) {
	const stall = 20 * time.Millisecond
	never := make(chan struct{})

	t.Run("done", func(t *testing.T) {
		done := make(chan struct{})
		close(done)
		assert.NoError(t, awaitProgress(done, func() int64 { return 0 }, stall, time.Time{}))
	})

	t.Run("stalled", func(t *testing.T) {
		calls := 0
		// Five steps, then none: a lost wakeup after some progress.
		progress := func() int64 { calls++; return int64(min(calls, 5)) }
		err := awaitProgress(never, progress, stall, time.Time{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no progress for")
		assert.Contains(t, err.Error(), "after 5 steps")
	})

	t.Run("slow but advancing", func(t *testing.T) {
		// A step at every look, done at the 200th: the run lasts ten
		// stall times at least (the looks are stall/20 apart), and passes.
		done := make(chan struct{})
		calls := 0
		progress := func() int64 {
			calls++
			if calls == 200 {
				close(done)
			}
			return int64(calls)
		}
		start := time.Now()
		assert.NoError(t, awaitProgress(done, progress, stall, time.Time{}))
		assert.GreaterOrEqual(t, time.Since(start), 5*stall, "the run outlived the stall time")
	})

	t.Run("deadline", func(t *testing.T) {
		calls := 0
		progress := func() int64 { calls++; return int64(calls) }
		err := awaitProgress(never, progress, stall, time.Now())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not done by nine tenths of the test's -timeout")
	})
}
