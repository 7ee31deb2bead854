package connpool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/mutex"
)

// ErrClosed is returned by Acquire and AcquireTimeout once the pool is
// closed.
var ErrClosed = errors.New("connpool: pool closed")

// ErrTimeout is returned by AcquireTimeout when its time limit passes. It
// matches context.DeadlineExceeded with errors.Is, as a timed-out Acquire's
// error does.
var ErrTimeout = fmt.Errorf("connpool: acquire timed out: %w", context.DeadlineExceeded)

// ErrNotAcquired is matched (with errors.Is) by the panic value of Release
// and Remove called with a connection that is not acquired from the pool:
// released or removed already, or from another pool.
var ErrNotAcquired = errors.New("connpool: connection not acquired from this pool")

// Config says how a Pool makes, closes and guards its connections.
type Config[T any] struct {
	// Capacity is the most connections the pool holds at once, idle, in
	// use and being dialed together. It must be positive.
	Capacity int
	// Dial makes a new connection. It is called without the pool's lock
	// held, with the context of the Acquire that needs the connection.
	// It is required.
	Dial func(ctx context.Context) (T, error)
	// Close, if not nil, is called without the pool's lock held for each
	// connection the pool lets go: removed, released after Close, or idle
	// when the pool is closed.
	Close func(T)
	// Locker guards the pool's state. Nil means a new mutex.Mutex. Any
	// sync.Locker works, which lets the benchmarks run the same pool on
	// each lock they compare; the pool waits on a condvar.Cond bound to it.
	// The pool must be the only user of the lock.
	Locker sync.Locker
}

// A Pool is a bounded pool of connections of type T, after Jetty's
// connection pool: callers acquire a connection, use it, and either
// release it for reuse or remove it (when it is broken), which frees its
// place for a new one. Idle connections are reused most recent first;
// when none is idle and the pool is below capacity, Acquire dials a new
// one; at capacity, Acquire waits for a Release or Remove.
//
// A Pool must be made with New. Its methods are safe for concurrent use.
// A Release or Remove “synchronizes before” the Acquire that gets the
// connection (or the place it freed).
type Pool[T any] struct {
	capacity int
	dial     func(context.Context) (T, error)
	close    func(T)

	mu    sync.Locker
	avail *condvar.Cond // signalled, with mu held, when a connection goes idle or a place frees

	// Guarded by mu. Invariants: len(idle) <= total <= capacity;
	// total counts idle, acquired and being-dialed connections;
	// closed implies idle is empty.
	idle    []*Conn[T]
	total   int
	waiting int // goroutines in avail.Wait*
	closed  bool
}

// Conn is a connection of a Pool: the value Dial made plus the pool's
// bookkeeping. The caller that acquired it may use Value until it hands
// the Conn back with Release or Remove.
type Conn[T any] struct {
	pool  *Pool[T]
	value T
	state connState // guarded by pool.mu
}

type connState uint8

const (
	stateAcquired connState = iota
	stateIdle
	stateGone // removed, or closed with the pool
)

// Value returns the connection Dial made.
func (c *Conn[T]) Value() T { return c.value }

// New returns an empty pool configured by cfg. It panics if cfg.Capacity
// is not positive or cfg.Dial is nil.
func New[T any](cfg Config[T]) *Pool[T] {
	if cfg.Capacity <= 0 {
		panic(fmt.Sprintf("connpool: New with Capacity %d", cfg.Capacity))
	}
	if cfg.Dial == nil {
		panic("connpool: New with a nil Dial")
	}
	mu := cfg.Locker
	if mu == nil {
		mu = new(mutex.Mutex)
	}
	return &Pool[T]{
		capacity: cfg.Capacity,
		dial:     cfg.Dial,
		close:    cfg.Close,
		mu:       mu,
		avail:    condvar.New(mu),
		idle:     make([]*Conn[T], 0, cfg.Capacity),
	}
}

// Capacity returns the most connections p holds at once.
func (p *Pool[T]) Capacity() int { return p.capacity }

// Stats is a snapshot of a pool's counts.
type Stats struct {
	Capacity int
	Total    int // idle, acquired and being dialed
	Idle     int
	InUse    int // acquired or being dialed
	Waiting  int // Acquire calls waiting for a connection
	Closed   bool
}

// Stats returns p's counts. They may be out of date by the time the caller
// reads them; use them for monitoring and tests.
func (p *Pool[T]) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{
		Capacity: p.capacity,
		Total:    p.total,
		Idle:     len(p.idle),
		InUse:    p.total - len(p.idle),
		Waiting:  p.waiting,
		Closed:   p.closed,
	}
}

// Acquire returns a connection from p: an idle one if there is one, else a
// new one if p is below capacity, else the first one released or place
// freed, waiting as long as it takes.
//
// On success, it returns the connection and nil. On failure it returns
// ctx.Err() if ctx is done first (also if it was done on entry, even when
// a connection is idle), ErrClosed if p is closed, or Dial's error; p is
// then left as it was.
func (p *Pool[T]) Acquire(ctx context.Context) (*Conn[T], error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return p.acquire(ctx, time.Time{})
}

// AcquireTimeout is Acquire with a time limit d on the whole call, waiting
// and dialing included. It returns ErrTimeout when the limit passes. If
// d <= 0 it does not wait or dial: it returns an idle connection if there
// is one and ErrTimeout otherwise.
func (p *Pool[T]) AcquireTimeout(d time.Duration) (*Conn[T], error) {
	deadline := time.Now().Add(d)
	if d <= 0 {
		deadline = time.Unix(0, 1) // any time in the past
	}
	return p.acquire(context.Background(), deadline)
}

// acquire implements Acquire (deadline zero) and AcquireTimeout.
func (p *Pool[T]) acquire(ctx context.Context, deadline time.Time) (*Conn[T], error) {
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if n := len(p.idle); n > 0 {
			c := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			c.state = stateAcquired
			p.mu.Unlock()
			return c, nil
		}
		if p.total < p.capacity && (deadline.IsZero() || time.Now().Before(deadline)) {
			p.total++ // the place is ours while we dial
			p.mu.Unlock()
			return p.dialNew(ctx, deadline)
		}
		if err := p.wait(ctx, deadline); err != nil {
			// Wait retook the lock. A signal meant for us, if one came
			// as we gave up, was passed on to the next waiter by
			// condvar, so no release is stranded.
			p.mu.Unlock()
			return nil, err
		}
	}
}

// wait waits, with mu held, for avail to be signalled, ctx to be done or
// deadline (if not zero) to pass, and returns nil if signalled.
func (p *Pool[T]) wait(ctx context.Context, deadline time.Time) error {
	p.waiting++
	defer func() { p.waiting-- }()
	if deadline.IsZero() {
		return p.avail.WaitContext(ctx)
	}
	if !p.avail.WaitTimeout(time.Until(deadline)) {
		return ErrTimeout
	}
	return nil
}

// dialNew dials a connection for a place already counted in total.
func (p *Pool[T]) dialNew(ctx context.Context, deadline time.Time) (*Conn[T], error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	v, err := p.dial(ctx)
	if err != nil {
		if !deadline.IsZero() && errors.Is(err, context.DeadlineExceeded) {
			err = ErrTimeout
		}
		p.mu.Lock()
		p.freePlace()
		p.mu.Unlock()
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.freePlace()
		p.mu.Unlock()
		p.closeValue(v)
		return nil, ErrClosed
	}
	p.mu.Unlock()
	return &Conn[T]{pool: p, value: v, state: stateAcquired}, nil
}

// freePlace gives back a place counted in total and wakes a waiter that
// can now dial. mu is held.
func (p *Pool[T]) freePlace() {
	p.total--
	if p.waiting > 0 {
		p.avail.Signal()
	}
}

// Release hands c back to p for reuse. If p is closed, c is closed
// instead.
//
// It is a run-time error, reported by a panic matching ErrNotAcquired, if
// c was not acquired from p or has been released or removed since.
func (p *Pool[T]) Release(c *Conn[T]) {
	p.mu.Lock()
	p.checkAcquired(c, "release")
	if p.closed {
		c.state = stateGone
		p.total--
		p.mu.Unlock()
		p.closeValue(c.value)
		return
	}
	c.state = stateIdle
	p.idle = append(p.idle, c)
	if p.waiting > 0 {
		p.avail.Signal()
	}
	p.mu.Unlock()
}

// Remove takes c out of p and closes it, freeing its place for a new
// connection; use it for a connection that is broken. The place is free as
// soon as c is out: Close runs after, without the lock, so a new
// connection may be dialed while c is still closing.
//
// It is a run-time error, reported by a panic matching ErrNotAcquired, if
// c was not acquired from p or has been released or removed since.
func (p *Pool[T]) Remove(c *Conn[T]) {
	p.mu.Lock()
	p.checkAcquired(c, "remove")
	c.state = stateGone
	p.freePlace()
	p.mu.Unlock()
	p.closeValue(c.value)
}

// checkAcquired panics, releasing mu first, unless c is acquired from p.
func (p *Pool[T]) checkAcquired(c *Conn[T], op string) {
	if c == nil || c.pool != p || c.state != stateAcquired {
		p.mu.Unlock()
		panic(fmt.Errorf("connpool: %s of a connection that is not acquired: %w", op, ErrNotAcquired))
	}
}

// Close closes p: it closes the idle connections, makes waiting and later
// Acquire calls return ErrClosed, and closes acquired connections as they
// are released or removed. Closing a closed pool does nothing.
func (p *Pool[T]) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.total -= len(idle)
	for _, c := range idle {
		c.state = stateGone
	}
	p.avail.Broadcast()
	p.mu.Unlock()
	for _, c := range idle {
		p.closeValue(c.value)
	}
}

func (p *Pool[T]) closeValue(v T) {
	if p.close != nil {
		p.close(v)
	}
}
