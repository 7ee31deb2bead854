package detect_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/mutex"
)

// stream's methods make one inversion: Read locks a then b, Write b then
// a.
type stream struct{ a, b mutex.Mutex }

func (s *stream) Read() {
	s.a.Lock()
	s.b.Lock()
	s.b.Unlock()
	s.a.Unlock()
}

func (s *stream) Write() {
	s.b.Lock()
	s.a.Lock()
	s.a.Unlock()
	s.b.Unlock()
}

// useStreamA and useStreamB are two callers of the methods, as two tests
// of one package would be.
func useStreamA(s *stream) { s.Read(); s.Write() }
func useStreamB(s *stream) { s.Read(); s.Write() }

// The same inversion reached from two callers of the methods that make
// it is one problem: the key names where each lock of the cycle is
// taken (Stream.Read's and Stream.Write's lines), not who called them.
func TestOneReportPerInversionFromTwoCallers(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	useStreamA(&stream{})
	useStreamB(&stream{})
	reps := rec.All()
	require.Len(t, reps, 1, "%s", rec)
	assert.Equal(t, detect.LockOrder, reps[0].Kind)
	assert.Equal(t, 2, reps[0].Seen().Times, "the second caller's inversion is counted")
	assert.Equal(t, 4, reps[0].Seen().Locks)
}

// lockBoth is a lock wrapper: every acquisition of an inversion made
// through it has the same innermost frames.
func lockBoth(x, y *mutex.Mutex) {
	x.Lock()
	y.Lock()
	y.Unlock()
	x.Unlock()
}

// Two inversions, each made by two functions calling lockBoth with a
// pair of locks in either order.
func forwardAB(a, b *mutex.Mutex) { lockBoth(a, b) }
func reverseAB(a, b *mutex.Mutex) { lockBoth(b, a) }
func forwardCD(c, d *mutex.Mutex) { lockBoth(c, d) }
func reverseCD(c, d *mutex.Mutex) { lockBoth(d, c) }

// Two different inversions made through one lock wrapper are two
// problems (the key names the wrapper's callers when the cycle's steps
// take their locks in one function), and each recurs as itself.
func TestTwoReportsForTwoInversionsThroughOneWrapper(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	var a, b, c, d mutex.Mutex
	forwardAB(&a, &b)
	reverseAB(&a, &b) // inversion 1
	forwardCD(&c, &d)
	reverseCD(&c, &d) // inversion 2
	var a2, b2 mutex.Mutex
	forwardAB(&a2, &b2)
	reverseAB(&a2, &b2) // inversion 1 again, on other locks
	reps := rec.All()
	require.Len(t, reps, 2, "%s", rec)
	times := map[int]int{}
	for _, r := range reps {
		assert.Equal(t, detect.LockOrder, r.Kind)
		times[r.Seen().Times]++
	}
	assert.Equal(t, map[int]int{1: 1, 2: 1}, times, "inversion 1 seen twice, inversion 2 once")
}
