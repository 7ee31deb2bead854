package batchqueue

import (
	"errors"
	"fmt"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
)

// ErrClosed is returned by Put and PutBatch on a closed queue, and by Take
// and TakeBatch on a closed queue that has been drained.
var ErrClosed = errors.New("batchqueue: queue closed")

// A Queue is a bounded first-in, first-out queue of items of type T.
//
// A Queue must be made with New and must not be copied after first use.
// Its methods are safe for concurrent use. Putting an item “synchronizes
// before” the Take that returns it.
type Queue[T any] struct {
	m        monitor.Monitor
	notFull  *condvar.Cond // bound to m; putters wait here
	notEmpty *condvar.Cond // bound to m; takers wait here

	// Guarded by m. Invariants: 0 <= n <= len(buf); the items are
	// buf[head], buf[head+1], ... n of them, wrapping at len(buf);
	// slots outside them hold the zero T.
	buf     []T
	head    int
	n       int
	putters int // goroutines waiting on notFull
	takers  int // goroutines waiting on notEmpty
	closed  bool
}

// New returns an empty queue that holds at most capacity items. It panics
// if capacity is not positive.
func New[T any](capacity int) *Queue[T] {
	if capacity <= 0 {
		panic(fmt.Sprintf("batchqueue: New with capacity %d", capacity))
	}
	q := &Queue[T]{buf: make([]T, capacity)}
	q.notFull = q.m.NewCond()
	q.notEmpty = q.m.NewCond()
	return q
}

// Cap returns the most items q holds.
func (q *Queue[T]) Cap() int { return len(q.buf) }

// Len returns the number of items in q. It may be out of date by the time
// the caller reads it.
func (q *Queue[T]) Len() int {
	q.m.Lock()
	defer q.m.Unlock()
	return q.n
}

// Put adds v at the tail of q, waiting while q is full. It returns
// ErrClosed, without adding v, if q is closed.
func (q *Queue[T]) Put(v T) error {
	q.m.Lock()
	for q.n == len(q.buf) && !q.closed {
		q.waitNotFull()
	}
	if q.closed {
		q.m.Unlock()
		return ErrClosed
	}
	q.buf[q.index(q.n)] = v
	q.n++
	q.wakeTaker()
	if q.n < len(q.buf) && q.putters > 0 {
		q.notFull.Signal() // room is left: pass the turn on
	}
	q.m.Unlock()
	return nil
}

// Take removes and returns the item at the head of q, waiting while q is
// empty. Once q is closed, Take still returns the items left in it, then
// the zero T and ErrClosed.
func (q *Queue[T]) Take() (T, error) {
	q.m.Lock()
	for q.n == 0 && !q.closed {
		q.waitNotEmpty()
	}
	var v T
	if q.n == 0 {
		q.m.Unlock()
		return v, ErrClosed
	}
	v, q.buf[q.head] = q.buf[q.head], v
	q.head = q.index(1)
	q.n--
	q.wakePutter()
	if q.n > 0 && q.takers > 0 {
		q.notEmpty.Signal() // items are left: pass the turn on
	}
	q.m.Unlock()
	return v, nil
}

// PutBatch adds items at the tail of q, in order, taking q's lock once. If
// they do not all fit, it adds as many as fit, lets takers at them, waits
// for room and goes on, so a batch larger than q's capacity moves in
// chunks; items from other putters do not come between them unless it has
// to wait. It returns len(items), nil when all are in. If q is closed
// before then, it returns how many it added and ErrClosed; those stay in q.
func (q *Queue[T]) PutBatch(items []T) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	q.m.Lock()
	done := 0
	for done < len(items) {
		for q.n == len(q.buf) && !q.closed {
			q.waitNotFull()
		}
		if q.closed {
			q.m.Unlock()
			return done, ErrClosed
		}
		tail := q.index(q.n)
		k := copy(q.buf[tail:min(len(q.buf), tail+len(q.buf)-q.n)], items[done:])
		if k < len(items)-done && q.n+k < len(q.buf) {
			// Wrapped: the free space goes on at the start of buf.
			k += copy(q.buf[:len(q.buf)-q.n-k], items[done+k:])
		}
		q.n += k
		done += k
		q.wakeTaker()
	}
	if q.n < len(q.buf) && q.putters > 0 {
		q.notFull.Signal() // room is left: pass the turn on
	}
	q.m.Unlock()
	return done, nil
}

// TakeBatch fills dst with items from the head of q, in order, taking q's
// lock once. If q holds fewer than len(dst), it takes them, lets putters
// refill q, waits and goes on, so a batch larger than q's capacity moves
// in chunks. It returns len(dst), nil when dst is full. If q is closed
// and drained before then, it returns how many items it took, possibly
// none, and ErrClosed.
func (q *Queue[T]) TakeBatch(dst []T) (int, error) {
	if len(dst) == 0 {
		return 0, nil
	}
	q.m.Lock()
	done := 0
	for done < len(dst) {
		for q.n == 0 && !q.closed {
			q.waitNotEmpty()
		}
		if q.n == 0 {
			q.m.Unlock()
			return done, ErrClosed
		}
		want := min(q.n, len(dst)-done)
		end := min(len(q.buf), q.head+want)
		k := copy(dst[done:], q.buf[q.head:end])
		clear(q.buf[q.head:end])
		if k < want {
			// Wrapped: the items go on at the start of buf.
			clear(q.buf[:copy(dst[done+k:done+want], q.buf[:want-k])])
			k = want
		}
		q.head = q.index(k)
		q.n -= k
		done += k
		q.wakePutter()
	}
	if q.n > 0 && q.takers > 0 {
		q.notEmpty.Signal() // items are left: pass the turn on
	}
	q.m.Unlock()
	return done, nil
}

// Close closes q: Put and PutBatch fail from now on, including those
// waiting, and Take and TakeBatch fail once q is drained. Closing a closed
// queue does nothing.
func (q *Queue[T]) Close() {
	q.m.Lock()
	if !q.closed {
		q.closed = true
		q.notFull.Broadcast()
		q.notEmpty.Broadcast()
	}
	q.m.Unlock()
}

// index returns the position in buf of the i'th item from the head.
func (q *Queue[T]) index(i int) int {
	j := q.head + i
	if j >= len(q.buf) {
		j -= len(q.buf)
	}
	return j
}

func (q *Queue[T]) waitNotFull() {
	q.putters++
	q.notFull.Wait()
	q.putters--
}

func (q *Queue[T]) waitNotEmpty() {
	q.takers++
	q.notEmpty.Wait()
	q.takers--
}

// wakeTaker wakes one waiting taker after items were added. Signals go
// one at a time, and every taker that leaves items behind passes the turn
// on, so a large batch wakes as many takers as it feeds without a
// Broadcast's stampede (putters do the same for room). The waiter count
// spares a Signal when nobody waits.
func (q *Queue[T]) wakeTaker() {
	if q.takers > 0 {
		q.notEmpty.Signal()
	}
}

// wakePutter wakes one waiting putter after room was made.
func (q *Queue[T]) wakePutter() {
	if q.putters > 0 {
		q.notFull.Signal()
	}
}
