//go:build go1.25

package locktest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// StrandedRW is a fresh read-write lock for RWUnlockStrandsReaders and
// how to observe it: its queues, and whether its state word says readers
// are queued (which sends every RLock and Unlock to the slow path).
type StrandedRW struct {
	L              testutil.RWLock
	Queues         func() (writers, readers int)
	ReadersWaiting func() bool
}

const strandedChildEnv = "LOCKSMITH_STRANDED_READERS_CHILD"

// RWUnlockStrandsReaders: a goroutine outside any bubble holds the write
// lock while it runs synctest.Test, and the bubble's goroutines queue for
// the read lock behind it (durably: the runtime counts the caller of Test
// in the bubble) until Test reports the deadlock. The holder's Unlock
// after that cannot wake them: it must take them off the reader queue,
// release the lock and then panic with an error matching errStranded that
// says so, leaving the state word clean (no readers waiting), so that
// the lock is back on its fast paths, and usable. In every detection
// mode. test is the calling test's name; the body runs in a child process
// of it (the bubble's readers stay blocked for good, which leak checks
// and synctest itself report), and the parent checks its output.
func RWUnlockStrandsReaders(t *testing.T, test string, errStranded error, fresh func() StrandedRW) {
	if mode := os.Getenv(strandedChildEnv); mode != "" {
		m, err := detect.ParseMode(mode)
		require.NoError(t, err)
		defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
		strandReaders(t, errStranded, fresh())
		return
	}
	for _, mode := range []string{"off", "cycles", "order"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.timeout=10m")
			cmd.Env = append(os.Environ(), strandedChildEnv+"="+mode)
			out, _ := cmd.CombinedOutput() // the child fails: its bubble deadlocked, and goroutines are left
			require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
			assert.NotContains(t, string(out), "fatal error")
			assert.Contains(t, string(out), "stranded-readers: done", "child output:\n%s", out)
		})
	}
}

// strandReaders is the child's body of RWUnlockStrandsReaders.
func strandReaders(t *testing.T, errStranded error, lk StrandedRW) {
	rw := lk.L
	rw.Lock()
	deadlock := func() (r any) {
		defer func() { r = recover() }()
		synctest.Test(t, func(t *testing.T) {
			go func() {
				rw.RLock() // behind the holder running Test: a durable wait
				rw.RUnlock()
			}()
			synctest.Wait()
			rw.RLock() // the bubble's last goroutine blocks too: a deadlock
			rw.RUnlock()
		})
		return nil
	}()
	require.NotNil(t, deadlock, "synctest.Test did not report the deadlock")
	_, queued := lk.Queues()
	require.Equal(t, 2, queued, "the bubble's readers queued")
	stranded := func() (r any) {
		defer func() { r = recover() }()
		rw.Unlock()
		return nil
	}()
	err, _ := stranded.(error)
	require.ErrorIs(t, err, errStranded, "Unlock's panic")
	assert.Contains(t, err.Error(), "the lock goes on without it", "Unlock's panic")
	_, queued = lk.Queues()
	assert.Zero(t, queued, "stranded readers left in the queue")
	assert.False(t, lk.ReadersWaiting(), "readersWaiting left set: RLock and Unlock stay on their slow paths")
	require.True(t, rw.TryRLock(), "the lock is not free for readers")
	rw.RUnlock()
	require.True(t, rw.TryLock(), "the lock is not free for a writer")
	assert.False(t, lk.ReadersWaiting())
	rw.Unlock()
	fmt.Println("stranded-readers: done")
}
