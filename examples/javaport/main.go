// Javaport is a Java class with synchronized methods that call each other
// and a wait/notifyAll loop, ported to Go with a monitor.Monitor. The
// comments map each Java construct to its locksmith counterpart.
//
// The Java original:
//
//	public class Warehouse {
//	    private final Map<String, Integer> stock = new HashMap<>();
//	    private int waiting;
//
//	    public synchronized void restock(String item, int n) {
//	        stock.merge(item, n, Integer::sum);
//	        notifyAll();
//	    }
//
//	    public synchronized int count(String item) {
//	        return stock.getOrDefault(item, 0);
//	    }
//
//	    public synchronized void take(String item, int n) throws InterruptedException {
//	        waiting++;
//	        try {
//	            while (count(item) < n) {   // re-enters the monitor
//	                wait();
//	            }
//	        } finally {
//	            waiting--;
//	        }
//	        stock.put(item, count(item) - n);
//	    }
//
//	    public synchronized boolean take(String item, int n, long millis) throws InterruptedException {
//	        long deadline = System.currentTimeMillis() + millis;
//	        while (count(item) < n) {
//	            long left = deadline - System.currentTimeMillis();
//	            if (left <= 0) return false;
//	            wait(left);
//	        }
//	        stock.put(item, count(item) - n);
//	        return true;
//	    }
//	}
//
// Run it with
//
//	go run ./examples/javaport
package main

import (
	"context"
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

// Warehouse is the Java class. Java gives every object a monitor; in Go the
// struct carries one: the zero value is ready to use, and it must not be
// copied after first use (go vet checks).
type Warehouse struct {
	m       monitor.Monitor // the object's intrinsic lock and its wait set
	stock   map[string]int  // guarded by m
	waiting int             // guarded by m: goroutines inside Take's wait loop

	countHolds int // guarded by m: the hold count count() last saw, for the demo
}

// Restock is `public synchronized void restock(String item, int n)`.
func (w *Warehouse) Restock(item string, n int) {
	w.m.Lock()         // entering a synchronized method
	defer w.m.Unlock() // leaving it, also by an exception (a panic)
	if w.stock == nil {
		w.stock = map[string]int{}
	}
	w.stock[item] += n
	w.m.NotifyAll() // notifyAll(): wakes every goroutine in w.m.Wait
}

// Count is `public synchronized int count(String item)`. Called from
// another synchronized method of the same object, it re-enters the
// monitor: Lock adds one to the hold count instead of blocking, as Java's
// synchronized does.
func (w *Warehouse) Count(item string) int {
	w.m.Lock()
	defer w.m.Unlock()
	w.countHolds = w.m.HoldCount()
	return w.stock[item]
}

// Take is `public synchronized void take(String item, int n) throws
// InterruptedException`. Java's Thread.interrupt() becomes a context: Take
// returns ctx.Err() where Java throws InterruptedException, and, as in
// Java, it still holds the monitor when it does, so the deferred Unlock
// (Java's implicit monitor exit) runs either way.
func (w *Warehouse) Take(ctx context.Context, item string, n int) error {
	w.m.Lock()
	defer w.m.Unlock()
	w.waiting++
	defer func() { w.waiting-- }() // the finally block
	for w.Count(item) < n {        // while (count(item) < n)
		// wait(): releases every hold (here 1; Java too releases all of
		// them), sleeps until notified, and takes the monitor back with
		// the same hold count.
		if err := w.m.WaitContext(ctx); err != nil {
			return err // InterruptedException
		}
	}
	w.stock[item] = w.Count(item) - n
	return nil
}

// TakeWithin is the timed overload, `take(String item, int n, long
// millis)`. The deadline loop around wait(left) is WaitUntilTimeout: one
// deadline for every wakeup, and the condition's last value as the result.
func (w *Warehouse) TakeWithin(item string, n int, d time.Duration) bool {
	w.m.Lock()
	defer w.m.Unlock()
	if !w.m.WaitUntilTimeout(d, func() bool { return w.Count(item) >= n }) {
		return false // if (left <= 0) return false;
	}
	w.stock[item] = w.Count(item) - n
	return true
}

// Waiting returns the number of goroutines waiting in Take.
func (w *Warehouse) Waiting() int {
	w.m.Lock()
	defer w.m.Unlock()
	return w.waiting
}

// Stock returns the stock as "item=n" pairs in name order.
func (w *Warehouse) Stock() string {
	w.m.Lock()
	defer w.m.Unlock()
	var parts []string
	for item, n := range w.stock {
		parts = append(parts, fmt.Sprintf("%s=%d", item, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// waitUntil polls cond until it holds: how the demo lets goroutines reach
// their wait() before it notifies them, so that its output is the same on
// every run. (A program does not need this: notifyAll finds whoever waits.)
func waitUntil(cond func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("javaport: timed out waiting for the pickers")
		}
		runtime.Gosched()
	}
	return nil
}

func run(out io.Writer) error {
	var w Warehouse
	fmt.Fprintln(out, "javaport: a Java class with synchronized methods, ported to monitor.Monitor")

	w.Restock("widget", 2)
	fmt.Fprintf(out, "restock(widget, 2); count(widget) = %d\n", w.Count("widget"))

	// Three threads block in take() until a restock notifies them all.
	type picked struct {
		name, item string
		n          int
		err        error
	}
	orders := []picked{{"A", "widget", 3, nil}, {"B", "widget", 4, nil}, {"C", "gadget", 1, nil}}
	results := make(chan picked, len(orders))
	var wg sync.WaitGroup
	for _, o := range orders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.err = w.Take(context.Background(), o.item, o.n)
			results <- o
		}()
	}
	if err := waitUntil(func() bool { return w.Waiting() == len(orders) }); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d pickers wait() in take()\n", len(orders))
	w.Restock("widget", 5) // 7 widgets: enough for A and B
	w.Restock("gadget", 1)
	wg.Wait()
	close(results)
	var done []string
	for r := range results {
		if r.err != nil {
			return fmt.Errorf("picker %s: %w", r.name, r.err)
		}
		done = append(done, fmt.Sprintf("picker %s took %d %s", r.name, r.n, r.item))
	}
	slices.Sort(done)
	for _, d := range done {
		fmt.Fprintln(out, d)
	}
	fmt.Fprintf(out, "count() called from take() ran with hold count %d (re-entry)\n", w.countHolds)

	// wait(long) that times out.
	ok := w.TakeWithin("gizmo", 1, 20*time.Millisecond)
	fmt.Fprintf(out, "take(gizmo, 1, 20ms) = %v (timed out)\n", ok)

	// Thread.interrupt() on a thread blocked in wait().
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	errc := make(chan error, 1)
	go func() { errc <- w.Take(ctx, "gizmo", 1) }()
	if err := waitUntil(func() bool { return w.Waiting() == 1 }); err != nil {
		return err
	}
	interrupt()
	err := <-errc
	fmt.Fprintf(out, "interrupt() during take(gizmo): %v (InterruptedException); still waiting: %d\n", err, w.Waiting())

	// wait() outside synchronized throws IllegalMonitorStateException; here
	// it panics with an error matching monitor.ErrNotOwner.
	fmt.Fprintf(out, "wait() without holding the monitor: panic matching monitor.ErrNotOwner = %v\n",
		panicMatches(func() { w.m.Wait() }, monitor.ErrNotOwner))

	fmt.Fprintf(out, "final stock: %s\n", w.Stock())
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
