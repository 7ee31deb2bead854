package detect_test

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// rwHolds parses what Dump says goroutine g holds of the RWMonitor named
// name: its write hold count (0 if none) and the readers count of its
// read hold (0 if none). A lock with detector metadata is listed with its
// holders in every mode.
func rwHolds(t *testing.T, g int64, name string) (writes, readers int) {
	t.Helper()
	var buf bytes.Buffer
	detect.Dump(&buf)
	d := buf.String()
	section := regexp.MustCompile(fmt.Sprintf(`(?m)^  goroutine %d[^\n]* holds:\n((?:    [^\n]*\n)*)`, g)).FindStringSubmatch(d)
	if section == nil {
		return 0, 0
	}
	lock := fmt.Sprintf(`"%s" \(\*monitor\.RWMonitor 0x[0-9a-f]+\)`, regexp.QuoteMeta(name))
	if m := regexp.MustCompile(lock + ` for writing \(hold count (\d+)\)`).FindStringSubmatch(section[1]); m != nil {
		_, err := fmt.Sscan(m[1], &writes)
		require.NoError(t, err)
	}
	if m := regexp.MustCompile(lock + ` for reading \(readers: (\d+)\)`).FindStringSubmatch(section[1]); m != nil {
		_, err := fmt.Sscan(m[1], &readers)
		require.NoError(t, err)
	}
	return writes, readers
}

// TestDumpRWMonitorHolds: Dump (in Order mode, which lists held locks)
// shows an RWMonitor's write holds with the writer's exact hold count,
// through re-entry by every method, release, read holds taken by the
// writer, a condition wait (which releases every hold and restores both
// counts) and downgrade, and shows each reader with the number of
// readers. The count is also exact when the holds were taken or dropped
// while Order mode was off.
func TestDumpRWMonitorHolds(t *testing.T) {
	t.Run("order", func(t *testing.T) {
		detecttest.Configure(t, detect.WithMode(detect.Order))
		rw := namedRW("rwmonitor", "A").(*monitor.RWMonitor)
		me := testutil.GoroutineID()
		check := func(wantW, wantR int, after string) {
			t.Helper()
			require.Equal(t, wantW, rw.WriteHoldCount(), after)
			w, r := rwHolds(t, me, "A")
			assert.Equal(t, wantW, w, "write hold count in Dump after %s", after)
			assert.Equal(t, wantR, r, "readers in Dump after %s", after)
		}
		rw.Lock()
		check(1, 0, "Lock")
		rw.Lock()
		require.True(t, rw.TryLock())
		require.NoError(t, rw.LockContext(context.Background()))
		check(4, 0, "Lock, TryLock and LockContext re-entries")
		rw.Unlock()
		check(3, 0, "an Unlock")
		rw.RLock()
		rw.RLock()
		check(3, 1, "the writer's two RLocks")

		// The wait releases all five holds: another goroutine then writes,
		// shown with one hold, and signals.
		c := rw.NewCond()
		signaller := testutil.Spawn(func() {
			testutil.WaitFor(t, "the waiter queued", func() bool { return c.Waiters() == 1 })
			rw.Lock()
			w, r := rwHolds(t, testutil.GoroutineID(), "A")
			assert.Equal(t, 1, w, "the signaller's write hold in Dump")
			assert.Zero(t, r)
			c.Signal()
			rw.Unlock()
		})
		c.Wait()
		require.Nil(t, signaller.Wait(t))
		check(3, 1, "a condition wait")
		require.Equal(t, 2, rw.ReadHoldCount())

		rw.RUnlock()
		for range 3 {
			rw.Unlock()
		}
		check(0, 1, "downgrade to one read hold")
		other := testutil.Spawn(func() {
			rw.RLock()
			rw.RLock()
			w, r := rwHolds(t, testutil.GoroutineID(), "A")
			assert.Equal(t, 0, w)
			assert.Equal(t, 2, r, "two readers, one of them re-entered")
			rw.RUnlock()
			rw.RUnlock()
		})
		require.Nil(t, other.Wait(t))
		rw.RUnlock()
		check(0, 0, "the last RUnlock")
	})
	t.Run("held across mode switches", func(t *testing.T) {
		detecttest.Configure(t, detect.WithMode(detect.Order))
		rw := namedRW("rwmonitor", "A").(*monitor.RWMonitor)
		me := testutil.GoroutineID()
		rw.Lock()
		rw.Lock()
		restore := detect.Configure(detect.WithMode(detect.Cycles))
		rw.Lock()
		rw.Lock()
		rw.Unlock() // three holds, two of them taken and one dropped while Order mode was off
		rw.RLock()
		restore()
		w, r := rwHolds(t, me, "A")
		assert.Equal(t, 3, w, "write hold count in Dump")
		assert.Equal(t, 1, r, "readers in Dump")
		rw.RUnlock()
		for range 3 {
			rw.Unlock()
		}
		w, r = rwHolds(t, me, "A")
		assert.Zero(t, w+r, "nothing held")
	})
}
