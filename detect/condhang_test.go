package detect_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestCondWaitTestGoroutineHang: a test's own goroutine (it runs
// testing.tRunner) in a Cond wait unsignalled for the wait timeout is
// reported, though no goroutine waits for a lock: the test cannot end.
// A scan before the timeout reports nothing, and the wait is reported
// once.
func TestCondWaitTestGoroutineHang(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Hour))
	const d = time.Minute
	cm := detecttest.Named("mutex", "cm").(*mutex.Mutex)
	c := condvar.New(cm)
	ready := false // guarded by cm
	me := testutil.GoroutineID()
	type scans struct{ early, late, again []*detect.Report }
	got := make(chan scans, 1)
	scanner := testutil.Spawn(func() {
		testutil.WaitFor(t, "the test's goroutine in its Cond wait", func() bool { return detect.InCondWait(me) })
		s := scans{detect.CondScanAt(d/2, d), detect.CondScanAt(2*d, d), detect.CondScanAt(3*d, d)}
		got <- s
		release(cm, c, &ready)
	})
	cm.Lock()
	for !ready {
		c.Wait() // THE TEST WAITS
	}
	cm.Unlock()
	require.Nil(t, scanner.Wait(t))
	s := <-got
	assert.Empty(t, s.early, "not yet the wait timeout")
	assert.Empty(t, s.again, "reported once")
	require.Len(t, s.late, 1)
	r := s.late[0]
	assert.Equal(t, detect.CondWait, r.Kind)
	require.Len(t, r.Steps, 1, "%s", r)
	assert.Equal(t, me, r.Steps[0].Goroutine)
	assert.Equal(t, "cm", detecttest.LockName(r.Steps[0].Cond.Lock))
	text := r.String()
	assert.Contains(t, text, fmt.Sprintf("locksmith: goroutine %d waits on a Cond, unsignalled for", me))
	assert.Contains(t, text, "in a test's own goroutine")
	assert.Contains(t, text, `on "cm" (*mutex.Mutex 0x`)
	assert.Contains(t, text, "the test cannot end until the Cond is signalled")
}

// TestCondWaitVerifyNoneGoroutineHang: a goroutine that called VerifyNone
// counts as a test's own: its unsignalled Cond wait is reported, and the
// report is claimed by its test.
func TestCondWaitVerifyNoneGoroutineHang(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Hour))
	const d = time.Minute
	cm := new(mutex.Mutex)
	c := condvar.New(cm)
	ready := false // guarded by cm
	ft := &fakeT{name: "TestHangs"}
	p := testutil.Spawn(func() {
		detect.VerifyNone(ft)
		cm.Lock()
		for !ready {
			c.Wait()
		}
		cm.Unlock()
		ft.end()
	})
	g := p.ID(t)
	testutil.WaitFor(t, "Cond waiter registered", func() bool { return detect.InCondWait(g) })
	assert.Empty(t, detect.CondScanAt(0, d), "just seen")
	rs := detect.CondScanAt(2*d, d)
	release(cm, c, &ready)
	require.Nil(t, p.Wait(t))
	require.Len(t, rs, 1)
	assert.Equal(t, g, rs[0].Steps[0].Goroutine)
	assert.Empty(t, ft.Errors(), "a scan of the test's own returns the report, delivers nothing")
}

// TestCondWaitIdleWorkersNotReported: a pool of workers idle in Cond waits
// far longer than the wait timeout, with nobody waiting for a lock, is no
// finding: they are no test's own goroutines.
func TestCondWaitIdleWorkersNotReported(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Hour))
	const d = time.Minute
	cm := new(mutex.Mutex)
	c := condvar.New(cm)
	stop := false // guarded by cm
	var workers []*testutil.Proc
	for range 4 {
		workers = append(workers, condWaiter(t, nil, cm, c, &stop))
	}
	assert.Empty(t, detect.CondScanAt(0, d), "idle workers, just seen")
	assert.Empty(t, detect.CondScanAt(2*d, d), "idle workers")
	assert.Empty(t, detect.CondScanAt(100*d, d), "idle workers, much later")
	release(cm, c, &stop)
	for _, w := range workers {
		require.Nil(t, w.Wait(t))
	}
}
