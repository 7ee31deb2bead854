package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// TestLostHoldsOfExitedGoroutinesDropped: goroutines whose Cond wait on a
// lock lost its holds (the retake panicked), and that recovered and
// exited without an Unlock, as a server's handler goroutines do when the
// server recovers their panics, leave records that nothing can use up (a
// goroutine's ID is not reused). They must not pile up for as long as the
// lock lives; the record of a goroutine still running stays.
func TestLostHoldsOfExitedGoroutinesDropped(t *testing.T) {
	var l Lock
	live := make(chan int64)
	release := make(chan struct{})
	go func() {
		g := gid.Get()
		l.LoseHolds(ClassMutex, g, 1, "cause")
		live <- g
		<-release
	}()
	lg := <-live
	const exited = 1000
	for range exited {
		done := make(chan struct{})
		go func() {
			defer close(done)
			l.LoseHolds(ClassMutex, gid.Get(), 1, "cause")
		}()
		<-done
	}
	n := l.PeekMeta().lost.Load().n.Load()
	assert.LessOrEqual(t, n, int32(16), "records of %d exited goroutines kept", exited)
	cause, quiet, ok := l.TakeLost(lg)
	require.True(t, ok, "the running goroutine's record dropped")
	assert.Equal(t, "cause", cause)
	assert.False(t, quiet)
	close(release)
}
