// Boundedbuffer is the classic bounded buffer: producers and consumers
// sharing a fixed-size ring guarded by a mutex.Mutex, with two condition
// variables, notFull (producers wait there) and notEmpty (consumers wait
// there), as in Java's ArrayBlockingQueue or the textbook monitor. Put and
// Take wait as long as their context allows; PutTimeout and TakeTimeout
// give up after a duration.
//
// Run it with
//
//	go run ./examples/boundedbuffer
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/mutex"
)

// ErrTimeout is returned by PutTimeout and TakeTimeout when the time runs
// out.
var ErrTimeout = errors.New("boundedbuffer: timed out")

// Buffer is a bounded FIFO of ints, safe for concurrent use. It must be
// made with New.
type Buffer struct {
	mu       mutex.Mutex
	notFull  *condvar.Cond // bound to mu; signalled when a slot frees
	notEmpty *condvar.Cond // bound to mu; signalled when an item arrives

	// Guarded by mu. Invariant: 0 <= n <= len(ring); the items are
	// ring[head], ..., n of them, wrapping.
	ring    []int
	head, n int
	maxSeen int // the largest n ever, to check the bound
}

// New returns an empty buffer that holds at most capacity items.
func New(capacity int) *Buffer {
	b := &Buffer{ring: make([]int, capacity)}
	b.notFull = condvar.New(&b.mu)
	b.notEmpty = condvar.New(&b.mu)
	return b
}

// Put adds v, waiting while the buffer is full, until ctx is done; then it
// returns ctx.Err() and adds nothing.
func (b *Buffer) Put(ctx context.Context, v int) error {
	return b.put(v, func() error { return b.notFull.WaitContext(ctx) })
}

// PutTimeout is Put with a time limit instead of a context.
func (b *Buffer) PutTimeout(v int, d time.Duration) error {
	deadline := time.Now().Add(d)
	return b.put(v, func() error { return waitUntil(b.notFull, deadline) })
}

func (b *Buffer) put(v int, wait func() error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.n == len(b.ring) {
		// The wait releases mu and retakes it before returning, also
		// when it returns an error: the deferred Unlock is right either
		// way.
		if err := wait(); err != nil {
			return err
		}
	}
	b.ring[(b.head+b.n)%len(b.ring)] = v
	b.n++
	b.maxSeen = max(b.maxSeen, b.n)
	b.notEmpty.Signal() // one item: one consumer
	return nil
}

// Take removes and returns the oldest item, waiting while the buffer is
// empty, until ctx is done; then it returns ctx.Err().
func (b *Buffer) Take(ctx context.Context) (int, error) {
	return b.take(func() error { return b.notEmpty.WaitContext(ctx) })
}

// TakeTimeout is Take with a time limit instead of a context.
func (b *Buffer) TakeTimeout(d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	return b.take(func() error { return waitUntil(b.notEmpty, deadline) })
}

func (b *Buffer) take(wait func() error) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.n == 0 {
		if err := wait(); err != nil {
			return 0, err
		}
	}
	v := b.ring[b.head]
	b.head = (b.head + 1) % len(b.ring)
	b.n--
	b.notFull.Signal() // one free slot: one producer
	return v, nil
}

// waitUntil waits on c for what is left until the deadline, or fails if
// nothing is. The caller's loop looks at its condition after every wakeup,
// so a wait that timed out just as the condition came true still succeeds.
func waitUntil(c *condvar.Cond, deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return ErrTimeout
	}
	c.WaitTimeout(left)
	return nil
}

// Len returns the number of items buffered.
func (b *Buffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

func run(out io.Writer) error {
	const (
		capacity  = 3
		producers = 4
		consumers = 3
		perProd   = 25
	)
	b := New(capacity)
	fmt.Fprintf(out, "boundedbuffer: capacity %d, %d producers x %d items, %d consumers\n",
		capacity, producers, perProd, consumers)

	// Producers put 1..100 between them; consumers take until the context
	// ends them, once every item has been taken.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var prod, cons sync.WaitGroup
	var mu sync.Mutex
	sum, taken := 0, 0
	for p := range producers {
		prod.Add(1)
		go func() {
			defer prod.Done()
			for i := range perProd {
				if err := b.Put(ctx, p*perProd+i+1); err != nil {
					panic(err) // ctx ends only after every Put
				}
			}
		}()
	}
	for range consumers {
		cons.Add(1)
		go func() {
			defer cons.Done()
			for {
				v, err := b.Take(ctx)
				if err != nil {
					return // cancelled: everything was taken
				}
				mu.Lock()
				sum += v
				taken++
				mu.Unlock()
			}
		}()
	}
	prod.Wait()
	if err := eventually(func() bool { return b.Len() == 0 }); err != nil { // the consumers drain the rest
		return err
	}
	stop() // ends the consumers' waits: WaitContext returns ctx.Err()
	cons.Wait()
	fmt.Fprintf(out, "took %d items, sum %d (want %d); never more than %d buffered\n",
		taken, sum, producers*perProd*(producers*perProd+1)/2, b.maxSeen)

	// Timeouts: taking from an empty buffer, putting into a full one.
	_, err := b.TakeTimeout(10 * time.Millisecond)
	fmt.Fprintf(out, "TakeTimeout(10ms) on an empty buffer: %v\n", err)
	for i := range capacity {
		if err := b.PutTimeout(i, time.Second); err != nil {
			return err
		}
	}
	err = b.PutTimeout(99, 10*time.Millisecond)
	fmt.Fprintf(out, "PutTimeout(10ms) on a full buffer: %v; still %d items\n", err, b.Len())

	// Cancellation: a producer blocked on the full buffer gives up when its
	// context is cancelled, and adds nothing.
	pctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- b.Put(pctx, 100) }()
	if err := eventually(func() bool { return b.notFull.Waiters() == 1 }); err != nil {
		cancel()
		return err
	}
	cancel()
	fmt.Fprintf(out, "Put blocked on a full buffer, then cancelled: %v; still %d items; mutex free: %v\n",
		<-errc, b.Len(), !b.mu.Locked())
	v, err := b.Take(context.Background())
	fmt.Fprintf(out, "Take: %d, %v (first in, first out)\n", v, err)
	return nil
}

// eventually polls cond until it holds, or fails after a generous time.
func eventually(cond func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("boundedbuffer: stuck")
		}
		runtime.Gosched()
	}
	return nil
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
