package detect_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// lineHere returns "file:line" of its caller.
func lineHere() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line)
}

// In Order mode every step of an inversion report names where its
// goroutine took the lock it holds, also when that acquisition recorded
// no stack: here the held lock a is taken alone for the second time (the
// first lone acquisition records the stack, later ones do not) and then
// nests b, a new edge whose held side has only the PC the lock keeps of
// its holder's (or reader's) acquisition.
func TestOrderReportNamesEveryHeldLockSite(t *testing.T) {
	type heldCase struct {
		name   string
		lock   func() string // takes a, returns the site
		unlock func()
		write  func() // write-locks a under b, closing the inversion
		undo   func()
	}
	var m mutex.Mutex
	var mon monitor.Monitor
	var rw, rw2 mutex.RWMutex
	var rwm monitor.RWMonitor
	var tm mutex.Mutex
	cases := []heldCase{
		{"mutex trylock", func() string { tm.TryLock(); return lineHere() }, tm.Unlock, tm.Lock, tm.Unlock},
		{"mutex", func() string { m.Lock(); return lineHere() }, m.Unlock, m.Lock, m.Unlock},
		{"monitor", func() string { mon.Lock(); return lineHere() }, mon.Unlock, mon.Lock, mon.Unlock},
		{"rwmutex read", func() string { rw.RLock(); return lineHere() }, rw.RUnlock, rw.Lock, rw.Unlock},
		{"rwmutex write", func() string { rw2.Lock(); return lineHere() }, rw2.Unlock, rw2.Lock, rw2.Unlock},
		{"rwmonitor read", func() string { rwm.RLock(); return lineHere() }, rwm.RUnlock, rwm.Lock, rwm.Unlock},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			var b mutex.Mutex
			c.lock() // the lock's first lone acquisition: its stack is recorded
			c.unlock()
			aSite := c.lock() // a lone acquisition seen before: no stack
			b.Lock()          // a new edge a -> b
			b.Unlock()
			c.unlock()
			b.Lock()
			bSite := lineHere() // one line below b's Lock
			c.write()           // b -> a: the inversion
			c.undo()
			b.Unlock()

			reps := rec.All(detect.LockOrder)
			require.Len(t, reps, 1, "%s", rec)
			r := reps[0]
			s := r.String()
			assert.NotContains(t, s, "not recorded", s)
			require.Len(t, r.Steps, 2, s)
			for _, st := range r.Steps {
				require.NotEmpty(t, st.HoldsAt, "step holding %s: %s", st.Holds, s)
				want := aSite
				if st.Holds.Addr == uintptr(unsafe.Pointer(&b)) {
					want = lineBefore(bSite)
				}
				got := fmt.Sprintf("%s:%d", filepath.Base(st.HoldsAt[0].File), st.HoldsAt[0].Line)
				assert.Equal(t, want, got, "where the holder of %s took it:\n%s", st.Holds, s)
			}
		})
	}
}

// lineBefore returns site ("file:line") one line up.
func lineBefore(site string) string {
	i := strings.LastIndexByte(site, ':')
	line, _ := strconv.Atoi(site[i+1:])
	return site[:i+1] + strconv.Itoa(line-1)
}

// A Deadlock report names where a reader in the cycle took its read
// lock, in Cycles and in Order mode: from the PC the lock keeps beside
// the reader's slot.
func TestDeadlockReportNamesReadHolderSite(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode))
			var rw mutex.RWMutex
			var m mutex.Mutex
			readSite := make(chan string, 1)
			m.Lock()
			other := testutil.Spawn(func() {
				rw.RLock()
				readSite <- lineHere()
				defer rw.RUnlock()
				m.Lock()
				m.Unlock()
			})
			site := lineBefore(<-readSite)
			detecttest.WaitParked(t, &m, other.ID(t))
			err := rw.LockContext(context.Background()) // waits for the reader, which waits for m
			m.Unlock()
			require.Nil(t, other.Wait(t))
			var de *detect.DeadlockError
			require.ErrorAs(t, err, &de)
			require.Len(t, rec.All(detect.Deadlock), 1)
			s := de.Report.String()
			found := false
			if mode == detect.Cycles && !fastSites {
				return // the purego build's fast paths record no PC
			}
			for _, st := range de.Report.Steps {
				if st.Holds != nil && st.HoldsForReading {
					found = true
					require.NotEmpty(t, st.HoldsAt, s)
					f := st.HoldsAt[0]
					assert.Equal(t, site, fmt.Sprintf("%s:%d", filepath.Base(f.File), f.Line), s)
				}
			}
			assert.True(t, found, "a step holds rw for reading:\n%s", s)
			assert.NotContains(t, s, "not recorded", s)
		})
	}
}

// A held lock taken along an old, known edge (c -> a, seen before) has
// the edge's recorded stack as its record; the inversion that a new edge
// from it (a -> b) makes names that site, a line of this file, for every
// step.
func TestOrderReportNamesHeldSiteAlongKnownEdge(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	var a, b, c mutex.Mutex
	nestCA := func() string {
		c.Lock()
		a.Lock()
		return lineBefore(lineHere())
	}
	first := nestCA() // the edge c -> a, recorded with this stack
	a.Unlock()
	c.Unlock()
	again := nestCA() // along the known edge: a's record is the edge's
	require.Equal(t, first, again)
	b.Lock() // a new edge a -> b
	b.Unlock()
	a.Unlock()
	c.Unlock()
	b.Lock()
	a.Lock() // b -> a: the inversion
	a.Unlock()
	b.Unlock()

	reps := rec.All(detect.LockOrder)
	require.Len(t, reps, 1, "%s", rec)
	s := reps[0].String()
	assert.NotContains(t, s, "not recorded", s)
	for _, st := range reps[0].Steps {
		require.NotEmpty(t, st.HoldsAt, "step holding %s: %s", st.Holds, s)
		assert.Equal(t, "lockedat_test.go", filepath.Base(st.HoldsAt[0].File), s)
		if st.Holds.Addr == uintptr(unsafe.Pointer(&a)) {
			assert.Equal(t, first, fmt.Sprintf("%s:%d", filepath.Base(st.HoldsAt[0].File), st.HoldsAt[0].Line), s)
		}
	}
}
