package detect_test

import (
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// dumpOnce returns what Dump writes now.
func dumpOnce() string {
	var b strings.Builder
	detect.Dump(&b)
	return b.String()
}

// dumpWhen calls Dump until its text contains want, and returns that
// text: a goroutine just started has not necessarily parked yet.
func dumpWhen(want string) string {
	for {
		if s := dumpOnce(); strings.Contains(s, want) {
			return s
		}
		runtime.Gosched()
	}
}

// Dump shows who waits for which lock and who holds it. Goroutine IDs,
// addresses and durations differ from run to run; this example prints the
// lines about the lock named "accounts", with each number replaced by N.
func ExampleDump() {
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
	var accounts mutex.Mutex
	detect.SetName(&accounts, "accounts")

	accounts.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		accounts.Lock() // waits for the main goroutine
		accounts.Unlock()
	}()
	text := dumpWhen(`to lock "accounts"`)
	accounts.Unlock()
	<-done

	number := regexp.MustCompile(`0x[0-9a-f]+|[0-9][0-9.]*(µs|ms|ns|s)?`)
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, `"accounts"`) {
			fmt.Println(number.ReplaceAllString(strings.TrimSpace(line), "N"))
		}
	}
	// Output:
	// goroutine N waiting N to lock "accounts" (*mutex.Mutex N), held by goroutine N
	// "accounts" (*mutex.Mutex N) (hold count N)
}

// WriteDOT writes the lock-order graph for Graphviz (dot -Tsvg): here the
// edges between three named locks, taken in the order a, b, c, and a, c.
func ExampleWriteDOT() {
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
	var a, b, c mutex.Mutex
	detect.SetName(&a, "a")
	detect.SetName(&b, "b")
	detect.SetName(&c, "c")
	a.Lock()
	b.Lock()
	c.Lock() // b -> c; a -> c is implied
	c.Unlock()
	b.Unlock()
	a.Unlock()

	var out strings.Builder
	if err := detect.WriteDOT(&out); err != nil {
		fmt.Println(err)
		return
	}
	// The graph holds every lock the program has nested in Order mode
	// (before Go 1.24 also locks it has dropped, other a's and b's among
	// them); keep the edges between these a, b and c, by their labels.
	label := map[string]string{} // DOT label -> name
	for name, l := range map[string]*mutex.Mutex{"a": &a, "b": &b, "c": &c} {
		label[strconv.Quote(fmt.Sprintf("%q (*mutex.Mutex %p)", name, l))] = name
	}
	node := regexp.MustCompile(`^\s*(L\d+) \[label=(".*")\];$`)
	edge := regexp.MustCompile(`^\s*(L\d+) -> (L\d+)`)
	names := map[string]string{}
	var edges []string
	for _, line := range strings.Split(out.String(), "\n") {
		if m := node.FindStringSubmatch(line); m != nil && label[m[2]] != "" {
			names[m[1]] = label[m[2]]
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if m := edge.FindStringSubmatch(line); m != nil && names[m[1]] != "" && names[m[2]] != "" {
			edges = append(edges, names[m[1]]+" -> "+names[m[2]])
		}
	}
	sort.Strings(edges)
	fmt.Println(strings.HasPrefix(out.String(), "digraph"))
	fmt.Println(strings.Join(edges, "\n"))
	// Output:
	// true
	// a -> b
	// b -> c
}

// SetName names a lock in reports, Dump and WriteDOT; a lock the detector
// cannot see is refused with ErrNotLocksmithLock.
func ExampleSetName() {
	var inbox monitor.Monitor
	var outbox mutex.Mutex
	detect.SetName(&inbox, "inbox")
	detect.SetName(&outbox, "outbox")

	defer detect.Configure(
		detect.WithMode(detect.Order),
		detect.WithReporter(func(r *detect.Report) {
			for _, s := range r.Steps {
				fmt.Printf("%s (%s) then %s (%s)\n", s.Holds.Name, s.Holds.Type, s.WaitsFor.Name, s.WaitsFor.Type)
			}
		}),
	)()
	inbox.Lock()
	outbox.Lock()
	outbox.Unlock()
	inbox.Unlock()
	outbox.Lock()
	inbox.Lock() // the reverse order: reported
	inbox.Unlock()
	outbox.Unlock()

	err, _ := catch(func() { detect.SetName(new(sync.Mutex), "plain") }).(error)
	fmt.Println(errors.Is(err, detect.ErrNotLocksmithLock))
	// Output:
	// inbox (*monitor.Monitor) then outbox (*mutex.Mutex)
	// outbox (*mutex.Mutex) then inbox (*monitor.Monitor)
	// true
}

// catch runs f and returns what it panicked with, or nil.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// WithReporter sends every report to the program's own function, instead
// of printing it (or, in a test binary, panicking). Each problem is
// reported once: the same inversion, at the same call sites, over other
// lock instances, is counted in Seen.
func ExampleWithReporter() {
	var reports []*detect.Report
	defer detect.Configure(
		detect.WithMode(detect.Order),
		detect.WithReporter(func(r *detect.Report) { reports = append(reports, r) }),
	)()
	inOrder := func(first, second *mutex.Mutex) {
		first.Lock()
		second.Lock()
		second.Unlock()
		first.Unlock()
	}
	for i := 0; i < 3; i++ {
		var a, b mutex.Mutex
		inOrder(&a, &b)
		inOrder(&b, &a) // the reverse order
	}

	fmt.Println(len(reports), reports[0].Kind)
	seen := reports[0].Seen()
	fmt.Println(seen.Times, "times,", seen.Locks, "locks")
	// Output:
	// 1 lock order
	// 3 times, 6 locks
}

// WithWaitTimeout reports a goroutine blocked on one lock for longer than
// the timeout, with the holder. The report is a warning: the waiter goes
// on waiting, and here gets the lock once the holder has heard of the
// report.
func ExampleWithWaitTimeout() {
	heard := make(chan *detect.Report, 1)
	defer detect.Configure(
		detect.WithMode(detect.Cycles),
		detect.WithWaitTimeout(5*time.Millisecond),
		detect.WithReporter(func(r *detect.Report) {
			select {
			case heard <- r:
			default:
			}
		}),
	)()
	var queue mutex.Mutex
	detect.SetName(&queue, "queue")

	queue.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		queue.Lock() // waits until the report has been heard
		queue.Unlock()
	}()
	r := <-heard
	queue.Unlock()
	<-done

	waiter, holder := r.Steps[0], r.Steps[1]
	fmt.Println(r.Kind)
	fmt.Println("waits for:", waiter.WaitsFor.Name, "held:", holder.Holds.Name)
	fmt.Println(r.Waited >= 5*time.Millisecond)
	// Output:
	// wait timeout
	// waits for: queue held: queue
	// true
}

// A Lock that would close a cycle of goroutines, each waiting for a lock
// the next one holds, panics with a *detect.DeadlockError instead of
// hanging: the caller's deferred Unlocks then free the other goroutine.
func Example_deadlock() {
	defer detect.Configure(
		detect.WithMode(detect.Cycles),
		detect.WithWaitTimeout(0),
		detect.WithReporter(func(*detect.Report) {}), // the panic below carries the report
	)()
	var a, b mutex.Mutex
	detect.SetName(&a, "a")
	detect.SetName(&b, "b")

	b.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Lock()
		defer a.Unlock()
		b.Lock() // waits for the main goroutine
		b.Unlock()
	}()
	dumpWhen(`to lock "b"`) // the other goroutine holds a and waits for b

	v := catch(a.Lock) // a is held by a goroutine that waits for b, held here
	b.Unlock()
	<-done

	var de *detect.DeadlockError
	if err, ok := v.(error); ok && errors.As(err, &de) {
		fmt.Println(errors.Is(err, detect.ErrDeadlock))
		fmt.Println(strings.SplitN(de.Report.String(), "\n", 2)[0])
		for _, s := range de.Report.Steps {
			fmt.Printf("holds %s, waits for %s\n", s.Holds.Name, s.WaitsFor.Name)
		}
	}
	// Output:
	// true
	// Found one locksmith deadlock: a, b
	// holds b, waits for a
	// holds a, waits for b
}
