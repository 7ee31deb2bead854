// Rubyport is a Ruby class that includes MonitorMixin (mon_synchronize,
// new_cond, wait_while, wait with a timeout) ported to Go with a
// monitor.Monitor and a condvar.Cond, followed by Ruby's "deadlock;
// recursive locking" ThreadError reproduced with a mutex.Mutex and
// rescued. The comments map each Ruby construct to its locksmith
// counterpart.
//
// The Ruby original:
//
//	require 'monitor'
//
//	class TicketQueue
//	  include MonitorMixin
//
//	  def initialize
//	    super()
//	    @tickets = []
//	    @ready = new_cond
//	  end
//
//	  def push(ticket)
//	    mon_synchronize do
//	      @tickets << ticket
//	      @ready.signal
//	    end
//	  end
//
//	  def push_all(tickets)
//	    mon_synchronize { tickets.each { |t| push(t) } }  # re-enters the monitor
//	  end
//
//	  def pop
//	    mon_synchronize do
//	      @ready.wait_while { @tickets.empty? }
//	      @tickets.shift
//	    end
//	  end
//
//	  def pop_within(seconds)
//	    mon_synchronize do
//	      @ready.wait(seconds) if @tickets.empty?
//	      @tickets.shift                                  # nil if still empty
//	    end
//	  end
//	end
//
//	m = Thread::Mutex.new
//	begin
//	  m.synchronize { m.synchronize { } }
//	rescue ThreadError => e
//	  puts e.message                                      # deadlock; recursive locking
//	end
//
// One difference is deliberate and cannot be otherwise: Ruby releases the
// monitors of a thread that dies holding them, but Go runs no code when a
// goroutine exits, so a Monitor held by a goroutine that returns stays held
// for good (detect.Dump names the exited holder). Unlock in a defer, or use
// Do, which is mon_synchronize.
//
// Run it with
//
//	go run ./examples/rubyport
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// TicketQueue is the Ruby class. `include MonitorMixin` becomes an
// embedded Monitor: its Lock, Unlock and Do are the queue's, as
// mon_enter, mon_exit and mon_synchronize are the Ruby object's.
type TicketQueue struct {
	monitor.Monitor
	tickets []string      // guarded by the monitor
	ready   *condvar.Cond // @ready = new_cond

	pushHolds int // guarded by the monitor: the hold count push last ran with, for the demo
}

// NewTicketQueue is `def initialize`: new_cond binds a condition to the
// monitor (Monitor.NewCond is condvar.New(&q.Monitor)).
func NewTicketQueue() *TicketQueue {
	q := &TicketQueue{}
	q.ready = q.NewCond()
	return q
}

// Push is `def push(ticket)`.
func (q *TicketQueue) Push(ticket string) {
	q.Do(func() { // mon_synchronize do ... end
		q.pushHolds = q.HoldCount()
		q.tickets = append(q.tickets, ticket)
		q.ready.Signal() // @ready.signal
	})
}

// PushAll is `def push_all(tickets)`: Push inside mon_synchronize
// re-enters the monitor, as Ruby's Monitor allows.
func (q *TicketQueue) PushAll(tickets ...string) {
	q.Do(func() {
		for _, t := range tickets {
			q.Push(t)
		}
	})
}

// Pop is `def pop`.
func (q *TicketQueue) Pop() (t string) {
	q.Do(func() {
		q.ready.WaitWhile(func() bool { return len(q.tickets) == 0 }) // @ready.wait_while { @tickets.empty? }
		t, q.tickets = q.tickets[0], q.tickets[1:]                    // @tickets.shift
	})
	return t
}

// PopWithin is `def pop_within(seconds)`. Ruby's wait(timeout) becomes
// WaitTimeout, which reports whether it was signalled; Ruby's nil is
// ok == false.
func (q *TicketQueue) PopWithin(d time.Duration) (t string, ok bool) {
	q.Do(func() {
		if len(q.tickets) == 0 {
			q.ready.WaitTimeout(d)
		}
		if len(q.tickets) > 0 {
			t, q.tickets, ok = q.tickets[0], q.tickets[1:], true
		}
	})
	return t, ok
}

// Size is `def size; mon_synchronize { @tickets.size }; end`.
func (q *TicketQueue) Size() (n int) {
	q.Do(func() { n = len(q.tickets) })
	return n
}

func run(out io.Writer) error {
	fmt.Fprintln(out, "rubyport: a MonitorMixin class and Thread::Mutex, ported to locksmith")

	q := NewTicketQueue()
	q.PushAll("t1", "t2", "t3")
	fmt.Fprintf(out, "push_all(t1 t2 t3): size %d; push ran inside push_all's mon_synchronize with hold count %d\n",
		q.Size(), q.pushHolds)
	fmt.Fprintf(out, "pop, pop, pop: %s %s %s\n", q.Pop(), q.Pop(), q.Pop())

	// Three threads in wait_while until tickets arrive.
	got := make(chan string, 3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got <- q.Pop()
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for q.ready.Waiters() != 3 { // only so that the output is the same on every run
		if time.Now().After(deadline) {
			return errors.New("rubyport: the poppers never waited")
		}
		runtime.Gosched()
	}
	fmt.Fprintln(out, "3 threads wait in wait_while { @tickets.empty? }")
	q.Push("u1")
	q.Push("u2")
	q.Push("u3")
	wg.Wait()
	close(got)
	var popped []string
	for t := range got {
		popped = append(popped, t)
	}
	slices.Sort(popped)
	fmt.Fprintf(out, "each push signalled one of them; they popped %s\n", strings.Join(popped, " "))

	t, ok := q.PopWithin(20 * time.Millisecond)
	fmt.Fprintf(out, "pop_within(0.02) on an empty queue: %q, %v (nil: wait timed out)\n", t, ok)

	// Thread::Mutex is not reentrant: synchronize inside synchronize raises
	// ThreadError "deadlock; recursive locking" at once; mutex.Mutex panics
	// with an error matching mutex.ErrRecursiveLock.
	var m mutex.Mutex
	err := rescue(func() {
		m.Lock()         // m.synchronize do
		defer m.Unlock() // (its ensure)
		m.Lock()         //   m.synchronize { }
		defer m.Unlock()
	})
	fmt.Fprintf(out, "m.synchronize { m.synchronize { } }: rescued %q (errors.Is ErrRecursiveLock: %v)\n",
		withoutGoroutine(err), errors.Is(err, mutex.ErrRecursiveLock))
	fmt.Fprintf(out, "after the rescue the mutex is unlocked: locked? %v; try_lock: %v\n", m.Locked(), m.TryLock())
	m.Unlock()

	// Mutex#unlock of an unlocked mutex raises ThreadError too.
	err = rescue(m.Unlock)
	fmt.Fprintf(out, "m.unlock when unlocked: rescued %q (errors.Is ErrNotOwner: %v)\n",
		withoutGoroutine(err), errors.Is(err, mutex.ErrNotOwner))
	return nil
}

// rescue runs f and returns the error it panicked with, as a Ruby rescue
// clause would catch the ThreadError.
func rescue(f func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			var ok bool
			if err, ok = v.(error); !ok {
				panic(v)
			}
		}
	}()
	f()
	return nil
}

// withoutGoroutine drops the " (goroutine N)" suffix and "(by goroutine
// N)" from a message, so that the output is the same on every run.
func withoutGoroutine(err error) string {
	if err == nil {
		return "<nil>"
	}
	s := err.Error()
	if i := strings.Index(s, " (goroutine "); i >= 0 {
		return s[:i]
	}
	if i := strings.Index(s, " (by goroutine "); i >= 0 {
		return s[:i]
	}
	return s
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
