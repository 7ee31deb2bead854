package detect_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// secondOccurrence waits until the watchdog has dealt with a second wait
// of first's problem: as a second report (a problem of its own), or
// counted in first's tally; and asserts the latter.
func secondOccurrence(t *testing.T, rec *detecttest.Recorder, first *detect.Report) {
	t.Helper()
	testutil.WaitFor(t, "the second wait dealt with", func() bool {
		return len(rec.All(detect.WaitTimeout)) > 1 || first.Seen().Times > 1
	})
	assert.Len(t, rec.All(detect.WaitTimeout), 1, "one hang, one problem\n%s", rec)
	assert.Equal(t, 2, first.Seen().Times, "both waits counted")
}

// TestWaitTimeoutHolderMovesOneProblem: two waits at one site for a lock
// whose holder has moved on to another line between them (as a holder
// running in a loop does) are one problem, not one per line the holder
// happens to be at.
func TestWaitTimeoutHolderMovesOneProblem(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	mu := new(mutex.Mutex)
	atA, toB, atB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	locked := make(chan struct{})
	holder := testutil.Spawn(func() {
		mu.Lock()
		close(locked)
		<-atA // the holder's first line
		close(toB)
		<-atB // and its second
		mu.Unlock()
	})
	<-locked
	wait := func() {
		mu.Lock()
		mu.Unlock()
	}
	w1 := testutil.Spawn(wait)
	first := rec.WaitN(t, detect.WaitTimeout, 1)[0]
	require.Len(t, first.Steps, 2)
	require.Equal(t, holder.ID(t), first.Steps[1].Goroutine)
	close(atA)
	<-toB
	w2 := testutil.Spawn(wait)
	secondOccurrence(t, rec, first)
	close(atB)
	for _, p := range []*testutil.Proc{holder, w1, w2} {
		require.Nil(t, p.Wait(t))
	}
}

// spawnInSlot starts f in a goroutine whose home reader slot (its ID mod
// 8, see core.RWLock) is slot, trying new goroutines until one fits.
func spawnInSlot(t *testing.T, slot int64, f func()) *testutil.Proc {
	for {
		ok := make(chan bool)
		p := testutil.Spawn(func() {
			if <-ok {
				f()
			}
		})
		fits := p.ID(t)%8 == slot
		ok <- fits
		if fits {
			return p
		}
		require.Nil(t, p.Wait(t))
	}
}

// drainRound is a writer waiting for two readers to leave: x, parked at
// one site, in reader slot slotX, and y, at another, in slotY.
type drainRound struct {
	x, y, w *testutil.Proc
	leave   chan struct{}
}

func startDrainRound(t *testing.T, rw *mutex.RWMutex, slotX, slotY int64) *drainRound {
	d := &drainRound{leave: make(chan struct{})}
	in := make(chan struct{}, 2)
	d.x = spawnInSlot(t, slotX, func() {
		rw.RLock()
		in <- struct{}{}
		<-d.leave // reader site X
		rw.RUnlock()
	})
	d.y = spawnInSlot(t, slotY, func() {
		rw.RLock()
		in <- struct{}{}
		<-d.leave // reader site Y
		rw.RUnlock()
	})
	<-in
	<-in
	d.w = testutil.Spawn(func() {
		rw.Lock() // one wait site for both rounds
		rw.Unlock()
	})
	return d
}

func (d *drainRound) end(t *testing.T) {
	close(d.leave)
	for _, p := range []*testutil.Proc{d.x, d.y, d.w} {
		require.Nil(t, p.Wait(t))
	}
}

// TestWaitTimeoutDrainReadersOneProblem: a writer waiting for two readers
// of different sites to leave, twice, with the readers in the opposite
// slot order the second time, is one problem: the order in which the
// report lists the readers (slot order) does not split it.
func TestWaitTimeoutDrainReadersOneProblem(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	rw := new(mutex.RWMutex)
	one := startDrainRound(t, rw, 1, 2)
	first := rec.WaitN(t, detect.WaitTimeout, 1)[0]
	require.Len(t, first.Steps, 3, "the writer and both readers")
	assert.Equal(t, []int64{one.x.G, one.y.G}, []int64{first.Steps[1].Goroutine, first.Steps[2].Goroutine}, "readers in slot order")
	one.end(t)
	two := startDrainRound(t, rw, 2, 1)
	secondOccurrence(t, rec, first)
	two.end(t)
}
