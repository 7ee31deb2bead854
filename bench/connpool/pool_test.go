//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package connpool_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/bench/connpool"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// conn is a fake connection that knows whether it was closed.
type conn struct {
	id     int
	closed atomic.Bool
}

// dialer makes conns with increasing ids and counts the open ones.
type dialer struct {
	next atomic.Int64
	open atomic.Int64
	peak atomic.Int64
}

func (d *dialer) dial(context.Context) (*conn, error) {
	n := d.open.Add(1)
	for {
		p := d.peak.Load()
		if n <= p || d.peak.CompareAndSwap(p, n) {
			break
		}
	}
	return &conn{id: int(d.next.Add(1))}, nil
}

func (d *dialer) close(c *conn) {
	if c.closed.Swap(true) {
		panic(fmt.Sprintf("conn %d closed twice", c.id))
	}
	d.open.Add(-1)
}

func newPool(capacity int, l sync.Locker) (*connpool.Pool[*conn], *dialer) {
	d := new(dialer)
	return connpool.New(connpool.Config[*conn]{Capacity: capacity, Dial: d.dial, Close: d.close, Locker: l}), d
}

func TestNewValidatesConfig(t *testing.T) {
	dial := func(context.Context) (int, error) { return 0, nil }
	assert.PanicsWithValue(t, "connpool: New with Capacity 0", func() { connpool.New(connpool.Config[int]{Dial: dial}) })
	assert.PanicsWithValue(t, "connpool: New with Capacity -1", func() { connpool.New(connpool.Config[int]{Capacity: -1, Dial: dial}) })
	assert.PanicsWithValue(t, "connpool: New with a nil Dial", func() { connpool.New(connpool.Config[int]{Capacity: 1}) })
}

func TestAcquireDialsThenReuses(t *testing.T) {
	p, d := newPool(3, nil) // nil Locker: a mutex.Mutex
	ctx := context.Background()
	assert.Equal(t, 3, p.Capacity())
	assert.Equal(t, connpool.Stats{Capacity: 3}, p.Stats())

	a, err := p.Acquire(ctx)
	require.NoError(t, err)
	b, err := p.Acquire(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, a.Value().id)
	assert.Equal(t, 2, b.Value().id)
	assert.Equal(t, connpool.Stats{Capacity: 3, Total: 2, InUse: 2}, p.Stats())

	p.Release(a)
	p.Release(b)
	assert.Equal(t, connpool.Stats{Capacity: 3, Total: 2, Idle: 2}, p.Stats())

	// Most recently released first; no new dial.
	c, err := p.Acquire(ctx)
	require.NoError(t, err)
	assert.Same(t, b, c)
	assert.EqualValues(t, 2, d.next.Load(), "no dial while a connection is idle")
	p.Release(c)
	p.Close()
	assert.Zero(t, d.open.Load(), "Close closes the idle connections")
}

func TestAcquireWaitsForRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPool(1, nil)
		defer p.Close()
		held, err := p.Acquire(context.Background())
		require.NoError(t, err)

		got := make(chan *connpool.Conn[*conn])
		go func() {
			c, err := p.Acquire(context.Background())
			assert.NoError(t, err)
			got <- c
		}()
		synctest.Wait()
		assert.Equal(t, 1, p.Stats().Waiting, "the second Acquire waits: the pool is at capacity")

		p.Release(held)
		c := <-got
		assert.Same(t, held, c, "the waiter gets the released connection")
		p.Release(c)
	})
}

func TestAcquireWaitsForRemove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newPool(1, nil)
		defer p.Close()
		held, err := p.Acquire(context.Background())
		require.NoError(t, err)

		got := make(chan *connpool.Conn[*conn])
		go func() {
			c, err := p.Acquire(context.Background())
			assert.NoError(t, err)
			got <- c
		}()
		synctest.Wait()
		p.Remove(held)
		assert.True(t, held.Value().closed.Load(), "Remove closes the connection")
		c := <-got
		assert.NotSame(t, held, c, "the waiter dials a new connection in the freed place")
		assert.EqualValues(t, 1, d.open.Load())
		p.Release(c)
	})
}

func TestAcquireContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newPool(1, nil)
		defer p.Close()
		held, err := p.Acquire(context.Background())
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			_, err := p.Acquire(ctx)
			errc <- err
		}()
		synctest.Wait()
		cancel()
		assert.ErrorIs(t, <-errc, context.Canceled)
		assert.Equal(t, connpool.Stats{Capacity: 1, Total: 1, InUse: 1}, p.Stats(), "a failed Acquire leaves the pool as it was")

		ctx, cancel = context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		_, err = p.Acquire(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, time.Second, time.Since(start))

		p.Release(held)
		// A done context fails even though a connection is idle.
		_, err = p.Acquire(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 1, p.Stats().Idle)
	})
}

func TestCancelledWaiterPassesSignalOn(t *testing.T) {
	// Two waiters; a release signals the first, which is cancelled at the
	// same moment. The release must reach the second waiter either way.
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			p, _ := newPool(1, nil)
			defer p.Close()
			held, err := p.Acquire(context.Background())
			require.NoError(t, err)

			ctx, cancel := context.WithCancel(context.Background())
			first := make(chan error, 1)
			go func() {
				c, err := p.Acquire(ctx)
				if err == nil {
					p.Release(c)
				}
				first <- err
			}()
			synctest.Wait()
			second := make(chan *connpool.Conn[*conn], 1)
			go func() {
				c, err := p.Acquire(context.Background())
				assert.NoError(t, err)
				second <- c
			}()
			synctest.Wait()
			go cancel()
			p.Release(held)
			<-first
			c := <-second
			p.Release(c)
		})
	}
}

func TestAcquireTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newPool(1, nil)
		defer p.Close()

		// d <= 0: no dialing, no waiting.
		_, err := p.AcquireTimeout(0)
		assert.ErrorIs(t, err, connpool.ErrTimeout)
		assert.Zero(t, d.next.Load(), "AcquireTimeout(0) does not dial")

		held, err := p.AcquireTimeout(time.Second)
		require.NoError(t, err)

		start := time.Now()
		_, err = p.AcquireTimeout(50 * time.Millisecond)
		assert.ErrorIs(t, err, connpool.ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 50*time.Millisecond, time.Since(start))
		assert.Zero(t, p.Stats().Waiting)

		// Released during the wait: the waiter gets it.
		go func() {
			time.Sleep(10 * time.Millisecond)
			p.Release(held)
		}()
		c, err := p.AcquireTimeout(time.Second)
		require.NoError(t, err)
		assert.Same(t, held, c)
		assert.Equal(t, 10*time.Millisecond, time.Since(start)-50*time.Millisecond)
		p.Release(c)

		c, err = p.AcquireTimeout(-time.Second)
		require.NoError(t, err, "an idle connection is returned even with no time")
		p.Release(c)
	})
}

func TestAcquireTimeoutBoundsDial(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, ctx.Err()
		}
		p := connpool.New(connpool.Config[int]{Capacity: 1, Dial: slow})
		defer p.Close()
		start := time.Now()
		_, err := p.AcquireTimeout(20 * time.Millisecond)
		assert.ErrorIs(t, err, connpool.ErrTimeout)
		assert.Equal(t, 20*time.Millisecond, time.Since(start))
		assert.Equal(t, connpool.Stats{Capacity: 1}, p.Stats(), "the place is freed")
	})
}

func TestDialError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		release := make(chan struct{})
		var calls atomic.Int32
		dial := func(context.Context) (int, error) {
			if calls.Add(1) == 1 {
				<-release
				return 0, boom
			}
			return 7, nil
		}
		p := connpool.New(connpool.Config[int]{Capacity: 1, Dial: dial})
		defer p.Close()

		errc := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			errc <- err
		}()
		synctest.Wait() // the first Acquire is dialing, holding the only place
		got := make(chan int)
		go func() {
			c, err := p.Acquire(context.Background())
			assert.NoError(t, err)
			got <- c.Value()
			p.Release(c)
		}()
		synctest.Wait()
		assert.Equal(t, 1, p.Stats().Waiting)

		close(release)
		assert.ErrorIs(t, <-errc, boom)
		assert.Equal(t, 7, <-got, "the failed dial's place went to the waiter")
	})
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newPool(2, nil)
		ctx := context.Background()
		a, err := p.Acquire(ctx)
		require.NoError(t, err)
		b, err := p.Acquire(ctx)
		require.NoError(t, err)
		p.Release(b)

		errc := make(chan error)
		go func() {
			_, err := p.Acquire(ctx) // gets b
			assert.NoError(t, err)
			_, err = p.Acquire(ctx) // waits: both connections in use
			errc <- err
		}()
		synctest.Wait()

		p.Close()
		assert.ErrorIs(t, <-errc, connpool.ErrClosed, "Close wakes waiters")
		_, err = p.Acquire(ctx)
		assert.ErrorIs(t, err, connpool.ErrClosed)
		_, err = p.AcquireTimeout(time.Second)
		assert.ErrorIs(t, err, connpool.ErrClosed)

		p.Release(a)
		assert.True(t, a.Value().closed.Load(), "a connection released after Close is closed")
		assert.True(t, p.Stats().Closed)
		p.Close() // no-op
		assert.EqualValues(t, 1, d.open.Load(), "b is still out; its holder returned nothing")
	})
}

func TestDialFinishingAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var closed atomic.Int32
		p := connpool.New(connpool.Config[int]{
			Capacity: 1,
			Dial: func(context.Context) (int, error) {
				<-release
				return 1, nil
			},
			Close: func(int) { closed.Add(1) },
		})
		errc := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			errc <- err
		}()
		synctest.Wait()
		p.Close()
		close(release)
		assert.ErrorIs(t, <-errc, connpool.ErrClosed)
		assert.EqualValues(t, 1, closed.Load(), "the connection dialed too late is closed")
		assert.Equal(t, 0, p.Stats().Total)
	})
}

func TestMisusePanics(t *testing.T) {
	p, _ := newPool(2, nil)
	defer p.Close()
	other, _ := newPool(1, nil)
	defer other.Close()
	ctx := context.Background()
	c, err := p.Acquire(ctx)
	require.NoError(t, err)
	foreign, err := other.Acquire(ctx)
	require.NoError(t, err)
	defer other.Release(foreign)

	p.Release(c)
	removed, err := p.Acquire(ctx)
	require.NoError(t, err)
	p.Remove(removed)

	tests := []struct {
		name string
		f    func()
	}{
		{"release twice", func() { p.Release(c) }},
		{"remove after release", func() { p.Remove(c) }},
		{"release after remove", func() { p.Release(removed) }},
		{"remove twice", func() { p.Remove(removed) }},
		{"release to another pool", func() { p.Release(foreign) }},
		{"remove from another pool", func() { p.Remove(foreign) }},
		{"release nil", func() { p.Release(nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				require.NotNil(t, v, "no panic")
				err, ok := v.(error)
				require.True(t, ok, "panic value %v is not an error", v)
				assert.ErrorIs(t, err, connpool.ErrNotAcquired)
				assert.Regexp(t, `^connpool: (release|remove) of a connection that is not acquired`, err.Error())
			}()
			tt.f()
		})
	}
	// The pool still works: a panic does not leave it locked.
	c2, err := p.Acquire(ctx)
	require.NoError(t, err)
	p.Release(c2)
}

// hammer runs goroutines that acquire and then release or remove, as fast
// as they can, and checks that no more than the capacity are ever
// acquired at once.
func hammer(t *testing.T, l sync.Locker, procs, goroutines, iters int) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	const capacity = 4
	p, d := newPool(capacity, l)
	var inUse, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				var (
					c   *connpool.Conn[*conn]
					err error
				)
				if i%3 == 0 {
					c, err = p.AcquireTimeout(time.Minute)
				} else {
					c, err = p.Acquire(context.Background())
				}
				if !assert.NoError(t, err) {
					return
				}
				assert.False(t, c.Value().closed.Load(), "acquired a closed connection")
				n := inUse.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				inUse.Add(-1)
				if (g+i)%5 == 0 {
					p.Remove(c)
				} else {
					p.Release(c)
				}
			}
		}()
	}
	wg.Wait()
	st := p.Stats()
	assert.Zero(t, st.InUse)
	assert.Zero(t, st.Waiting)
	assert.LessOrEqual(t, peak.Load(), int64(capacity), "never more than capacity acquired at once")
	// A removed connection is closed after its place is freed, so up to
	// one per goroutine may still be closing while new ones are dialed.
	assert.LessOrEqual(t, d.peak.Load(), int64(capacity+goroutines))
	p.Close()
	assert.Zero(t, d.open.Load(), "every connection closed")
}

func TestHammer(t *testing.T) {
	locks := map[string]func() sync.Locker{
		"mutex.Mutex":     func() sync.Locker { return new(mutex.Mutex) },
		"monitor.Monitor": func() sync.Locker { return new(monitor.Monitor) },
		"sync.Mutex":      func() sync.Locker { return new(sync.Mutex) },
	}
	iters := 2000
	if testing.Short() {
		iters = 200
	}
	for name, newLock := range locks {
		for _, procs := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/procs=%d", name, procs), func(t *testing.T) {
				hammer(t, newLock(), procs, 8, iters)
			})
		}
	}
}
