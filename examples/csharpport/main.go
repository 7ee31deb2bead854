// Csharpport is a C# mailbox built on lock and the Monitor class (Wait,
// Pulse, PulseAll, and TryEnter with a timeout) ported to Go with a
// monitor.Monitor. The comments map each C# construct to its locksmith
// counterpart.
//
// The C# original:
//
//	public sealed class Mailbox
//	{
//	    private readonly object gate = new object();
//	    private readonly Queue<string> messages = new Queue<string>();
//	    private bool closed;
//	    private int waiting;
//
//	    public void Post(string message)
//	    {
//	        lock (gate)
//	        {
//	            if (closed) throw new InvalidOperationException("mailbox closed");
//	            messages.Enqueue(message);
//	            Monitor.Pulse(gate);                 // one receiver is enough
//	        }
//	    }
//
//	    public void PostAll(params string[] batch)
//	    {
//	        lock (gate) { foreach (var m in batch) Post(m); }   // lock re-enters
//	    }
//
//	    // Receive waits for a message; null once the mailbox is closed and empty.
//	    public string Receive()
//	    {
//	        lock (gate)
//	        {
//	            waiting++;
//	            try
//	            {
//	                while (messages.Count == 0 && !closed) Monitor.Wait(gate);
//	            }
//	            finally { waiting--; }
//	            return messages.Count > 0 ? messages.Dequeue() : null;
//	        }
//	    }
//
//	    // TryReceive gives up after timeout, waiting for the lock and for a
//	    // message alike.
//	    public bool TryReceive(TimeSpan timeout, out string message)
//	    {
//	        message = null;
//	        var deadline = DateTime.UtcNow + timeout;
//	        if (!Monitor.TryEnter(gate, timeout)) return false;    // the lock stayed busy
//	        try
//	        {
//	            while (messages.Count == 0)
//	            {
//	                var left = deadline - DateTime.UtcNow;
//	                if (closed || left <= TimeSpan.Zero) return false;
//	                Monitor.Wait(gate, left);
//	            }
//	            message = messages.Dequeue();
//	            return true;
//	        }
//	        finally { Monitor.Exit(gate); }
//	    }
//
//	    public void Close()
//	    {
//	        lock (gate) { closed = true; Monitor.PulseAll(gate); }  // every receiver re-checks
//	    }
//	}
//
// Run it with
//
//	go run ./examples/csharpport
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

	"github.com/locksmith-go/locksmith/monitor"
)

// ErrClosed is the InvalidOperationException that Post throws once the
// mailbox is closed: an outcome the caller handles, so an error.
var ErrClosed = errors.New("mailbox closed")

// Mailbox is the C# class. C# locks any object; in Go the struct carries
// the lock: `object gate` becomes a monitor.Monitor, whose zero value is
// ready to use and which must not be copied after first use (go vet
// checks). Like C#'s Monitor it is reentrant and has one wait set.
type Mailbox struct {
	gate     monitor.Monitor // lock (gate), Monitor.Enter/Exit/Wait/Pulse(gate)
	messages []string        // guarded by gate
	closed   bool            // guarded by gate
	waiting  int             // guarded by gate: goroutines inside Receive's wait loop

	postHolds int // guarded by gate: the hold count Post last ran with, for the demo
}

// Post is `public void Post(string message)`. A lock block is Lock plus a
// deferred Unlock: the lock is released however the block is left, also
// by a panic (C#'s exception).
func (mb *Mailbox) Post(message string) error {
	mb.gate.Lock()         // lock (gate) {
	defer mb.gate.Unlock() // }
	mb.postHolds = mb.gate.HoldCount()
	if mb.closed {
		return ErrClosed
	}
	mb.messages = append(mb.messages, message)
	mb.gate.Notify() // Monitor.Pulse(gate): wakes the goroutine that has waited longest
	return nil
}

// PostAll is `public void PostAll(params string[] batch)`: Post inside the
// lock block re-enters the monitor, as C#'s lock does.
func (mb *Mailbox) PostAll(batch ...string) error {
	mb.gate.Lock()
	defer mb.gate.Unlock()
	for _, m := range batch {
		if err := mb.Post(m); err != nil {
			return err
		}
	}
	return nil
}

// Receive is `public string Receive()`; C#'s null is ok == false.
func (mb *Mailbox) Receive() (message string, ok bool) {
	mb.gate.Lock()
	defer mb.gate.Unlock()
	mb.waiting++
	defer func() { mb.waiting-- }() // the finally block; runs before the Unlock
	for len(mb.messages) == 0 && !mb.closed {
		// Monitor.Wait(gate): releases the lock (every hold, as C# does),
		// sleeps until pulsed, and takes it back with the same hold count.
		mb.gate.Wait()
	}
	return mb.take()
}

// TryReceive is `public bool TryReceive(TimeSpan timeout, out string
// message)`. Monitor.TryEnter(gate, timeout) becomes LockTimeout, and the
// loop around Monitor.Wait(gate, left) becomes WaitUntilTimeout; both
// share one deadline.
func (mb *Mailbox) TryReceive(timeout time.Duration) (message string, ok bool) {
	deadline := time.Now().Add(timeout)
	if !mb.gate.LockTimeout(timeout) { // if (!Monitor.TryEnter(gate, timeout)) return false;
		return "", false
	}
	defer mb.gate.Unlock() // finally { Monitor.Exit(gate); }
	// while (messages.Count == 0) { if (closed || left <= 0) return false; Monitor.Wait(gate, left); }
	mb.gate.WaitUntilTimeout(time.Until(deadline), func() bool { return len(mb.messages) > 0 || mb.closed })
	return mb.take() // false if no message came: closed, or out of time
}

// take dequeues the first message; the caller holds gate.
func (mb *Mailbox) take() (string, bool) {
	if len(mb.messages) == 0 {
		return "", false
	}
	m := mb.messages[0]
	mb.messages = mb.messages[1:]
	return m, true
}

// Close is `public void Close()`.
func (mb *Mailbox) Close() {
	mb.gate.Lock()
	defer mb.gate.Unlock()
	mb.closed = true
	mb.gate.NotifyAll() // Monitor.PulseAll(gate)
}

// Waiting returns the number of goroutines waiting in Receive.
func (mb *Mailbox) Waiting() int {
	mb.gate.Lock()
	defer mb.gate.Unlock()
	return mb.waiting
}

// waitUntil polls cond until it holds: how the demo lets goroutines reach
// their Wait before it pulses them, so that its output is the same on
// every run. (A program does not need this: Pulse finds whoever waits.)
func waitUntil(cond func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("csharpport: timed out waiting for the receivers")
		}
		runtime.Gosched()
	}
	return nil
}

// receivers starts n goroutines in Receive and waits until all of them
// wait; the returned function collects what they received, sorted.
func receivers(mb *Mailbox, n int) (collect func() []string, err error) {
	got := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, ok := mb.Receive()
			if !ok {
				m = "null"
			}
			got <- m
		}()
	}
	collect = func() []string {
		wg.Wait()
		close(got)
		var all []string
		for m := range got {
			all = append(all, m)
		}
		slices.Sort(all)
		return all
	}
	if err := waitUntil(func() bool { return mb.Waiting() == n }); err != nil {
		return nil, err
	}
	return collect, nil
}

func run(out io.Writer) error {
	var mb Mailbox
	fmt.Fprintln(out, "csharpport: a C# mailbox on lock and Monitor, ported to monitor.Monitor")

	if err := mb.PostAll("a", "b", "c"); err != nil {
		return err
	}
	fmt.Fprintf(out, "PostAll(a, b, c): Post ran inside PostAll's lock with hold count %d\n", mb.postHolds)
	var first []string
	for range 3 {
		m, _ := mb.Receive()
		first = append(first, m)
	}
	fmt.Fprintf(out, "Receive x3: %s\n", strings.Join(first, " "))

	// Three threads in Monitor.Wait; each Pulse wakes exactly one.
	collect, err := receivers(&mb, 3)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "3 receivers in Monitor.Wait(gate)")
	for _, m := range []string{"m1", "m2", "m3"} {
		if err := mb.Post(m); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "3 Posts, each Monitor.Pulse(gate): they received %s\n", strings.Join(collect(), " "))

	// Monitor.Wait(gate, left) that runs out of time.
	m, ok := mb.TryReceive(20 * time.Millisecond)
	fmt.Fprintf(out, "TryReceive(20ms) on an empty mailbox: %q, %v (Monitor.Wait timed out)\n", m, ok)

	// Monitor.TryEnter(gate, timeout) that runs out of time: a message is
	// there, but another thread sits in lock (gate) for longer.
	if err := mb.Post("late"); err != nil {
		return err
	}
	held, release, released := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(released)
		mb.gate.Lock() // another thread inside lock (gate) { ... }
		close(held)
		<-release
		mb.gate.Unlock()
	}()
	<-held
	m, ok = mb.TryReceive(20 * time.Millisecond)
	fmt.Fprintf(out, "TryReceive(20ms) while another thread holds the lock: %q, %v (Monitor.TryEnter timed out)\n", m, ok)
	close(release)
	<-released
	m, ok = mb.TryReceive(time.Second)
	fmt.Fprintf(out, "TryReceive(1s) once it is free: %q, %v\n", m, ok)

	// Close: PulseAll wakes every receiver, and each returns null.
	collect, err = receivers(&mb, 2)
	if err != nil {
		return err
	}
	mb.Close()
	fmt.Fprintf(out, "Close with 2 receivers waiting, Monitor.PulseAll(gate): they received %s\n", strings.Join(collect(), " "))
	fmt.Fprintf(out, "Post after Close: %v (InvalidOperationException)\n", mb.Post("x"))

	// Monitor.Exit or Monitor.Wait without the lock throw
	// SynchronizationLockException; here they panic with an error
	// matching monitor.ErrNotOwner, and the lock is unchanged.
	fmt.Fprintf(out, "Monitor.Exit(gate) without the lock: panic matching monitor.ErrNotOwner = %v\n",
		panicMatches(mb.gate.Unlock, monitor.ErrNotOwner))
	fmt.Fprintf(out, "Monitor.Wait(gate) without the lock: panic matching monitor.ErrNotOwner = %v\n",
		panicMatches(mb.gate.Wait, monitor.ErrNotOwner))
	return nil
}

// panicMatches runs f and reports whether it panicked with an error
// matching target.
func panicMatches(f func(), target error) (matched bool) {
	defer func() {
		err, ok := recover().(error)
		matched = ok && errors.Is(err, target)
	}()
	f()
	return false
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
