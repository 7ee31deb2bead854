package detect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// unnamedHere matches how a report's first line names an unnamed lock
// of this file: type, address and a site here, by file name.
const unnamedHere = `\*mutex\.Mutex 0x[0-9a-f]+ \((?:first locked|first waited for|locked) at firstline_test\.go:\d+\)`

func firstLine(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }

// Every report's first line, and the first line of its error, names the
// unnamed locks it is about by type, address and site, whatever the kind.
func TestFirstLineNamesUnnamedLocks(t *testing.T) {
	t.Run("lock order", func(t *testing.T) {
		rec := detecttest.Configure(t, detect.WithMode(detect.Order))
		var a, b mutex.Mutex
		a.Lock()
		b.Lock()
		b.Unlock()
		a.Unlock()
		b.Lock()
		a.Lock()
		a.Unlock()
		b.Unlock()
		reps := rec.All(detect.LockOrder)
		require.Len(t, reps, 1, "%s", rec)
		assert.Regexp(t, `^WARNING: possible circular locking dependency detected: `+unnamedHere+`, `+unnamedHere+`$`, firstLine(reps[0].String()))
		le := &detect.LockOrderError{Report: reps[0]}
		assert.Regexp(t, `^detect: lock order inversion: goroutine \d+ locked `+unnamedHere+` while holding `+unnamedHere+`, the reverse`, firstLine(le.Error()))
	})
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run("deadlock/"+mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode))
			var x, y mutex.Mutex
			xHeld := make(chan struct{})
			y.Lock()
			other := testutil.Spawn(func() {
				x.Lock()
				defer x.Unlock()
				close(xHeld)
				y.Lock()
				y.Unlock()
			})
			<-xHeld
			detecttest.WaitParked(t, &y, other.ID(t))
			err := x.LockContext(context.Background())
			y.Unlock()
			require.Nil(t, other.Wait(t))
			var de *detect.DeadlockError
			require.ErrorAs(t, err, &de)
			require.Len(t, rec.All(detect.Deadlock), 1)
			assert.Regexp(t, `^Found one locksmith deadlock: `+unnamedHere+`, `+unnamedHere+`$`, firstLine(de.Report.String()))
			assert.Regexp(t, `^detect: deadlock: goroutine \d+ waits for `+unnamedHere+` held by goroutine \d+; goroutine \d+ waits for `+unnamedHere+` held by`, de.Error())
			assert.Regexp(t, `goroutine \d+ waits for `+unnamedHere+` at `, de.Report.Line())
		})
		t.Run("exited holder/"+mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode))
			var m mutex.Mutex
			leaveHeld(t, m.Lock)
			err := m.LockContext(context.Background())
			var de *detect.DeadlockError
			require.ErrorAs(t, err, &de)
			require.Len(t, rec.All(detect.Deadlock), 1)
			assert.Regexp(t, `^Found one locksmith deadlock: `+unnamedHere+`$`, firstLine(de.Report.String()))
		})
		t.Run("wait timeout/"+mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode), detect.WithWaitTimeout(waitTimeout))
			var m mutex.Mutex
			m.Lock()
			w := testutil.Spawn(func() {
				m.Lock()
				m.Unlock()
			})
			r := rec.WaitN(t, detect.WaitTimeout, 1)[0]
			m.Unlock()
			require.Nil(t, w.Wait(t))
			assert.Regexp(t, `^locksmith: goroutine blocked on a lock for \S+: `+unnamedHere+`$`, firstLine(r.String()))
			assert.Equal(t, firstLine(r.String()), r.Line())
		})
	}
}
