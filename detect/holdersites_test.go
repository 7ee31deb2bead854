package detect_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// thisLine returns "file:line" of its caller.
func thisLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

// lineAbove returns "file:line" of the line above its caller's.
func lineAbove() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line-1)
}

// holderDeadlock makes a two-goroutine deadlock on x and y, each taken by
// lock (which returns the line it took the lock on, thisLine() on the
// same line) and returns the report and the lines where the other
// goroutine took x and the caller took y.
func holderDeadlock(t *testing.T, x, y sync.Locker, lock func(sync.Locker) string, tryX func() error) (r *detect.Report, xAt, yAt string) {
	t.Helper()
	xHeld := make(chan struct{})
	yAt = lock(y)
	other := testutil.Spawn(func() {
		xAt = lock(x)
		defer x.Unlock()
		close(xHeld)
		y.Lock()
		y.Unlock()
	})
	<-xHeld
	detecttest.WaitParked(t, y, other.ID(t))
	err := tryX()
	y.Unlock()
	require.Nil(t, other.Wait(t))
	var de *detect.DeadlockError
	require.ErrorAs(t, err, &de)
	return de.Report, xAt, yAt
}

// A Cycles-mode report says where each holder took the lock it holds:
// the line of the Lock call, not a line where another goroutine waited.
func TestCyclesReportNamesHolderSites(t *testing.T) {
	// Each lock is called directly, not through sync.Locker: a call through the
	// interface is not inlined, and the site recorded is the lock's own.
	cases := []struct {
		name string
		x, y sync.Locker
		lock func(sync.Locker) string
		tryX func(x sync.Locker) error
	}{
		{name: "Mutex", x: new(mutex.Mutex), y: new(mutex.Mutex),
			lock: func(l sync.Locker) string { l.(*mutex.Mutex).Lock(); return thisLine() },
			tryX: func(x sync.Locker) error { return x.(*mutex.Mutex).LockContext(context.Background()) }},
		// A re-entry after the first entry: the report names the first.
		{name: "Monitor", x: new(monitor.Monitor), y: new(monitor.Monitor),
			lock: func(l sync.Locker) string {
				m := l.(*monitor.Monitor)
				m.Lock()
				at := lineAbove()
				m.Lock()
				m.Unlock()
				return at
			},
			tryX: func(x sync.Locker) error { return x.(*monitor.Monitor).LockContext(context.Background()) }},
		{name: "RWMutex", x: new(mutex.RWMutex), y: new(mutex.RWMutex),
			lock: func(l sync.Locker) string { l.(*mutex.RWMutex).Lock(); return thisLine() },
			tryX: func(x sync.Locker) error { return x.(*mutex.RWMutex).LockContext(context.Background()) }},
		{name: "RWMonitor", x: new(monitor.RWMonitor), y: new(monitor.RWMonitor),
			lock: func(l sync.Locker) string { l.(*monitor.RWMonitor).Lock(); return thisLine() },
			tryX: func(x sync.Locker) error { return x.(*monitor.RWMonitor).LockContext(context.Background()) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(detect.Cycles))
			r, xAt, yAt := holderDeadlock(t, c.x, c.y, c.lock, func() error { return c.tryX(c.x) })
			s := r.String()
			t.Logf("report:\n%s", s)
			require.Len(t, r.Steps, 2)
			if !fastSites {
				t.Skip("the purego build's fast paths record no site")
			}
			want := map[int64]string{}
			for _, st := range r.Steps {
				require.NotEmpty(t, st.HoldsAt, "goroutine %d", st.Goroutine)
				f := st.HoldsAt[0]
				want[st.Goroutine] = fmt.Sprintf("%s:%d", f.File, f.Line)
			}
			got := []string{}
			for _, v := range want {
				got = append(got, v)
			}
			assert.ElementsMatch(t, []string{xAt, yAt}, got)
			assert.Contains(t, s, "\t"+xAt+"\n")
			assert.Contains(t, s, "\t"+yAt+"\n")
			assert.NotContains(t, s, "not recorded")
			assert.Contains(t, filepath.Base(xAt), "holdersites_test.go")
		})
	}
}
