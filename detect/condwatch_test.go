package detect_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// condWaiter starts a goroutine that takes hold (if not nil), waits on c,
// whose lock is l, until *done, and lets hold go; it returns once the
// goroutine is registered as parked in the Cond wait.
func condWaiter(t *testing.T, hold sync.Locker, l sync.Locker, c *condvar.Cond, done *bool) *testutil.Proc {
	t.Helper()
	p := testutil.Spawn(func() {
		if hold != nil {
			hold.Lock()
			defer hold.Unlock()
		}
		l.Lock()
		for !*done {
			c.Wait()
		}
		l.Unlock()
	})
	g := p.ID(t)
	testutil.WaitFor(t, "Cond waiter registered", func() bool { return detect.InCondWait(g) })
	return p
}

// release ends a condWaiter's wait.
func release(l sync.Locker, c *condvar.Cond, done *bool) {
	l.Lock()
	*done = true
	c.Broadcast()
	l.Unlock()
}

// TestCondWaitLockout: a goroutine waits on a Cond while it holds a, and
// another goroutine waits for a: once both waits have lasted the wait
// timeout, the watchdog reports the Cond wait (a CondWait report naming
// the Cond waiter, its Cond and the Cond's lock, what it holds, and the
// goroutine stuck behind it), once, and not also as a WaitTimeout. Dump
// lists the Cond waiter with its Cond and the lock it holds.
func TestCondWaitLockout(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode), detect.WithWaitTimeout(waitTimeout))
			a := detecttest.Named("mutex", "a").(*mutex.Mutex)
			cm := detecttest.Named("mutex", "cm").(*mutex.Mutex)
			c := condvar.New(cm)
			done := false // guarded by cm
			w := condWaiter(t, a, cm, c, &done)
			g := testutil.Spawn(func() {
				a.Lock()
				a.Unlock()
			})
			detecttest.WaitParked(t, a, g.ID(t))

			r := rec.WaitN(t, detect.CondWait, 1)[0]
			require.Len(t, r.Steps, 2, "%s", r)
			assert.Equal(t, w.G, r.Steps[0].Goroutine)
			require.NotNil(t, r.Steps[0].Cond)
			assert.Equal(t, "cm", detecttest.LockName(r.Steps[0].Cond.Lock))
			assert.Equal(t, "a", detecttest.LockName(r.Steps[0].Holds))
			assert.Equal(t, g.G, r.Steps[1].Goroutine)
			assert.Equal(t, "a", detecttest.LockName(r.Steps[1].WaitsFor))
			assert.GreaterOrEqual(t, r.Waited, waitTimeout)
			for _, s := range r.Steps {
				_, ok := detecttest.OwnFrame(s.Stack, ownPrefix)
				assert.True(t, ok, "goroutine %d's stack: %v", s.Goroutine, s.Stack)
			}
			s := r.String()
			assert.Contains(t, s, fmt.Sprintf("locksmith: goroutine %d waits on a Cond, unsignalled for", w.G))
			assert.Contains(t, s, fmt.Sprintf("goroutine %d has waited at least", w.G))
			assert.Contains(t, s, `on Cond 0x`)
			assert.Contains(t, s, `on "cm" (*mutex.Mutex 0x`)
			assert.Contains(t, s, `and holds "a" (*mutex.Mutex 0x`)
			assert.Contains(t, s, fmt.Sprintf(`goroutine %d waits to lock "a" (*mutex.Mutex`, g.G))
			assert.Contains(t, s, "nested-monitor lockout")

			var dump bytes.Buffer
			detect.Dump(&dump)
			d := dump.String()
			assert.Contains(t, d, "cond waiters: 1\n", d)
			assert.Contains(t, d, fmt.Sprintf(`  goroutine %d waiting on Cond 0x`, w.G), d)
			assert.Contains(t, d, ` on "cm" (*mutex.Mutex 0x`, d)
			assert.Contains(t, d, ", for at least ", d)
			assert.Contains(t, d, ", holding:\n    \"a\" (*mutex.Mutex 0x", d)
			assert.Contains(t, d, "(hold count 1)", d)

			release(cm, c, &done)
			require.Nil(t, w.Wait(t))
			require.Nil(t, g.Wait(t))
			assert.Len(t, rec.All(detect.CondWait), 1, "one report per Cond wait\n%s", rec)
			assert.Empty(t, rec.All(detect.WaitTimeout), "the lock wait is reported by the CondWait report\n%s", rec)

			dump.Reset()
			detect.Dump(&dump)
			assert.Contains(t, dump.String(), "cond waiters: 0\n")
		})
	}
}

// TestCondWaitLockoutBehindQueuedWriter: the Cond waiter holds rw for
// reading; a writer waits for it to leave, and a reader queues behind the
// writer (writer preference). The report names the reader's wait behind
// the queued writer.
func TestCondWaitLockoutBehindQueuedWriter(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	rw := detecttest.Named("rwmutex", "rw").(*mutex.RWMutex)
	cm := new(mutex.Mutex)
	c := condvar.New(cm)
	done := false // guarded by cm
	w := condWaiter(t, rw.RLocker(), cm, c, &done)
	wr := testutil.Spawn(func() {
		rw.Lock()
		rw.Unlock()
	})
	detecttest.WaitParked(t, rw, wr.ID(t))
	rd := testutil.Spawn(func() {
		rw.RLock()
		rw.RUnlock()
	})
	detecttest.WaitParked(t, rw, rd.ID(t))

	r := rec.WaitN(t, detect.CondWait, 1)[0]
	require.Len(t, r.Steps, 3, "%s", r)
	assert.Equal(t, w.G, r.Steps[0].Goroutine)
	assert.Equal(t, "rw", detecttest.LockName(r.Steps[0].Holds))
	assert.True(t, r.Steps[0].HoldsForReading)
	assert.Equal(t, wr.G, r.Steps[1].Goroutine)
	assert.True(t, r.Steps[1].Queued)
	assert.Equal(t, rd.G, r.Steps[2].Goroutine)
	assert.True(t, r.Steps[2].WaitsForReading)
	s := r.String()
	assert.Contains(t, s, `and holds "rw" (*mutex.RWMutex`)
	assert.Contains(t, s, fmt.Sprintf("goroutine %d waits to lock \"rw\" (*mutex.RWMutex", wr.G))
	assert.Contains(t, s, "for writing, queued ahead of new readers")

	release(cm, c, &done)
	require.Nil(t, w.Wait(t))
	require.Nil(t, wr.Wait(t))
	require.Nil(t, rd.Wait(t))
}

// TestCondWaitDecisions drives the watchdog's Cond checks by hand, as scans
// made a given time ahead (the wait timeout is an hour, so the watchdog's
// own scans never run): a Cond wait is reported only once it and a lock
// wait stuck behind it have both lasted the wait timeout. Holding a lock
// nobody wants, or one another goroutine has wanted only briefly, is not
// reported; a Cond wait not signalled while a goroutine waits for the
// Cond's own lock is, naming that lock's holder.
func TestCondWaitDecisions(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Hour))
	const d = time.Minute
	a := detecttest.Named("mutex", "a").(*mutex.Mutex)
	cm := detecttest.Named("mutex", "cm").(*mutex.Mutex)
	c := condvar.New(cm)
	done := false // guarded by cm
	w := condWaiter(t, a, cm, c, &done)
	assert.Empty(t, detect.CondScanAt(0, d), "a Cond wait just seen")
	assert.Empty(t, detect.CondScanAt(2*d, d), "a Cond wait holding a lock nobody wants")

	g := testutil.Spawn(func() {
		a.Lock()
		a.Unlock()
	})
	detecttest.WaitParked(t, a, g.ID(t))
	assert.Empty(t, detect.CondScanAt(d/2, d), "the lock wait behind it has not lasted the wait timeout")
	rs := detect.CondScanAt(2*d, d)
	require.Len(t, rs, 1)
	assert.Equal(t, []int64{w.G, g.G}, []int64{rs[0].Steps[0].Goroutine, rs[0].Steps[1].Goroutine})
	assert.Empty(t, detect.CondScanAt(3*d, d), "reported once")

	// The Cond's own lock: this goroutine holds it, another waits for it.
	m2 := detecttest.Named("mutex", "m2").(*mutex.Mutex)
	c2 := condvar.New(m2)
	done2 := false // guarded by m2
	w2 := condWaiter(t, nil, m2, c2, &done2)
	assert.Empty(t, detect.CondScanAt(0, d))
	m2.Lock()
	g2 := testutil.Spawn(func() {
		m2.Lock()
		m2.Unlock()
	})
	detecttest.WaitParked(t, m2, g2.ID(t))
	rs = detect.CondScanAt(2*d, d)
	require.Len(t, rs, 1)
	r := rs[0]
	require.Len(t, r.Steps, 3, "%s", r)
	assert.Equal(t, w2.G, r.Steps[0].Goroutine)
	assert.Nil(t, r.Steps[0].Holds)
	assert.Equal(t, "m2", detecttest.LockName(r.Steps[0].Cond.Lock))
	assert.Equal(t, g2.G, r.Steps[1].Goroutine)
	assert.Equal(t, "m2", detecttest.LockName(r.Steps[1].WaitsFor))
	assert.Equal(t, testutil.GoroutineID(), r.Steps[2].Goroutine)
	assert.Equal(t, "m2", detecttest.LockName(r.Steps[2].Holds))
	s := r.String()
	assert.Contains(t, s, "while others wait for its lock")
	assert.Contains(t, s, fmt.Sprintf(`goroutine %d holds "m2" (*mutex.Mutex`, testutil.GoroutineID()))
	assert.NotContains(t, s, "nested-monitor lockout")

	m2.Unlock()
	require.Nil(t, g2.Wait(t))
	release(m2, c2, &done2)
	require.Nil(t, w2.Wait(t))
	release(cm, c, &done)
	require.Nil(t, w.Wait(t))
	require.Nil(t, g.Wait(t))
}

// TestCondWaitNotTracked: without a wait timeout Cond waits are not
// registered (a wait pays nothing for the detector), and Dump says so.
func TestCondWaitNotTracked(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0))
	cm := new(mutex.Mutex)
	c := condvar.New(cm)
	waiting := make(chan struct{})
	w := testutil.Spawn(func() {
		cm.Lock()
		close(waiting)
		c.Wait()
		cm.Unlock()
	})
	<-waiting
	testutil.WaitFor(t, "waiter parked", func() bool { return c.Waiters() == 1 && cm.TryLock() && unlock(cm) })
	assert.False(t, detect.InCondWait(w.ID(t)))
	var dump bytes.Buffer
	detect.Dump(&dump)
	assert.Contains(t, dump.String(), "cond waiters: not tracked (they are while a wait timeout is set: see WithWaitTimeout)\n")
	c.Signal()
	require.Nil(t, w.Wait(t))
}

func unlock(l sync.Locker) bool { l.Unlock(); return true }

// TestCondWaitMonitor: a Monitor's own Wait is a Cond wait: Dump lists it
// with the monitor as its lock.
func TestCondWaitMonitor(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Hour))
	m := detecttest.Named("monitor", "mon").(*monitor.Monitor)
	w := testutil.Spawn(func() {
		m.Lock()
		m.Lock() // a hold count of 2, released and restored by the wait
		m.Wait()
		m.Unlock()
		m.Unlock()
	})
	g := w.ID(t)
	testutil.WaitFor(t, "Monitor waiter registered", func() bool { return detect.InCondWait(g) })
	var dump bytes.Buffer
	detect.Dump(&dump)
	assert.Contains(t, dump.String(), fmt.Sprintf("  goroutine %d waiting on Cond 0x", g))
	assert.Contains(t, dump.String(), ` on "mon" (*monitor.Monitor 0x`)
	m.Lock()
	m.NotifyAll()
	m.Unlock()
	require.Nil(t, w.Wait(t))
	assert.False(t, detect.InCondWait(g))
}
