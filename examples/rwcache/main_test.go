package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := out.String()
	t.Log("\n" + s)

	assert.Contains(t, s, "8 concurrent readers saw \"data v1\"; the data was loaded 1 time(s)\n")
	assert.Contains(t, s, "after Invalidate: \"data v2\"\n")
	assert.Regexp(t, `Lock while holding the read lock \(Java hangs\): panic: monitor: deadlock; read-to-write upgrade: lock by goroutine \d+`, s)

	assert.Contains(t, s, "sync.RWMutex, no writer:        Total = 6 (works: every test passes)\n")
	assert.Contains(t, s, "sync.RWMutex, racing writer:   deadlock: Total waits in Get's RLock behind the writer,")
	assert.Contains(t, s, "Total = 6)\n")
	assert.Regexp(t, `mutex.RWMutex, no writer:       panic: mutex: deadlock; recursive read locking: rlock of rwmutex read-locked by the same goroutine \d+, (?:read-locked at \S+|first rlock site not recorded)\n`, s)
	assert.Contains(t, s, "monitor.RWMonitor, racing writer: Total = 6, then the writer ran: d = 4\n")
}

// TestProcessRefreshesOnce: concurrent Process calls on stale data load it
// once (the recheck under the write lock), and each sees valid data.
func TestProcessRefreshesOnce(t *testing.T) {
	var c CachedData
	done := make(chan string)
	for range 16 {
		go func() { done <- c.Process(func(d string) string { return d }) }()
	}
	for range 16 {
		assert.Equal(t, "data v1", <-done)
	}
	assert.Equal(t, 1, c.loads)
	assert.Zero(t, c.rwl.Readers())
	assert.False(t, c.rwl.Locked())
}
