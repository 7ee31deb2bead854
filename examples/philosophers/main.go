// Philosophers is Dijkstra's dining philosophers with deadlock detection
// on: five philosophers around a table, a fork (a mutex.Mutex) between
// each two, and each needs both neighbouring forks to eat.
//
// The naive philosopher takes the left fork, then the right. Run one
// philosopher after another in Order mode, it never blocks, yet the
// detector reports the circular dependency fork 0 < fork 1 < ... < fork 4
// < fork 0 the moment the fifth closes it. Run all five at once, made to
// collide (each holds its left fork before any asks for its right), in
// Cycles mode, the one whose wait would close the five-goroutine cycle
// gets a *detect.DeadlockError from LockContext instead of hanging, puts
// its fork down, and tries again. (Detectors that compare pairs of locks
// only, like go-deadlock's, miss this cycle of five.)
//
// The fix is a global order: every philosopher takes the lower-numbered of
// its two forks first. Five philosophers eating many meals at once then run
// clean in Order mode: no report at all.
//
// Run it with
//
//	go run ./examples/philosophers
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

const philosophers = 5

// table is the forks, fork i between philosopher i and philosopher i+1.
type table struct {
	forks [philosophers]mutex.Mutex
	meals [philosophers]int // meals[i] guarded by philosopher i's two forks
}

func newTable() *table {
	t := &table{}
	for i := range t.forks {
		detect.SetName(&t.forks[i], fmt.Sprintf("fork %d", i))
	}
	return t
}

// order returns the forks philosopher p picks up, in the order picked.
func (t *table) order(p int, fixed bool) (first, second int) {
	left, right := p, (p+1)%philosophers
	if fixed && right < left {
		return right, left // the global order: lower number first
	}
	return left, right
}

// eat picks up both forks, eats, and puts them down. holding runs with
// the first fork held. A deadlock comes back from LockContext as an
// error, the first fork is put down (deferred), and the caller retries.
func (t *table) eat(p int, fixed bool, holding func()) error {
	first, second := t.order(p, fixed)
	t.forks[first].Lock()
	defer t.forks[first].Unlock()
	holding()
	if err := t.forks[second].LockContext(context.Background()); err != nil {
		return err
	}
	defer t.forks[second].Unlock()
	t.meals[p]++
	return nil
}

type reportLog struct {
	mu      sync.Mutex
	reports []*detect.Report
}

func (l *reportLog) add(r *detect.Report) {
	l.mu.Lock()
	l.reports = append(l.reports, r)
	l.mu.Unlock()
}

func (l *reportLog) all() []*detect.Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reports
}

// naiveInTurn: the naive philosophers, one after the other, in Order mode.
func naiveInTurn(out io.Writer) ([]*detect.Report, error) {
	var log reportLog
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithReporter(log.add))()
	t := newTable()
	for p := range philosophers {
		if err := t.eat(p, false, func() {}); err != nil {
			return nil, err
		}
	}
	reports := log.all()
	fmt.Fprintf(out, "== naive, one philosopher after another, Order mode: every one ate, nothing blocked\n")
	fmt.Fprintf(out, "the detector's report (%d):\n\n", len(reports))
	for _, r := range reports {
		fmt.Fprintln(out, indent(r.String()))
	}
	fmt.Fprintln(out)
	return reports, nil
}

// naiveTogether: the naive philosophers all at once, colliding, in Cycles
// mode, backing off on a deadlock error. It returns the deadlock errors
// and reports.
func naiveTogether(out io.Writer) (deadlocks int, reports []*detect.Report, err error) {
	var log reportLog
	defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithReporter(log.add))()
	t := newTable()
	var all sync.WaitGroup
	all.Add(philosophers)
	barrier := func() { all.Done(); all.Wait() } // every left fork held before any right one is asked for

	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for p := range philosophers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			holding := barrier
			for {
				err := t.eat(p, false, holding)
				if !errors.Is(err, detect.ErrDeadlock) {
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
					return
				}
				mu.Lock()
				deadlocks++
				mu.Unlock()
				// Back off: the first fork is down (deferred); wait, holding
				// nothing, until the fork we were refused is free, then try
				// again. (Retrying at once could grab the first fork back
				// before the neighbour, woken, takes it: the same deadlock.)
				holding = func() {}
				_, second := t.order(p, false)
				t.forks[second].Lock()
				t.forks[second].Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	reports = log.all()
	fmt.Fprintf(out, "== naive, all at once, each holding its left fork, Cycles mode\n")
	fmt.Fprintf(out, "the detector's report (%d), without the stacks:\n\n", len(reports))
	for _, r := range reports {
		s, _, _ := strings.Cut(r.String(), "Stacks of the goroutines")
		fmt.Fprintln(out, indent(s))
	}
	fmt.Fprintf(out, "the philosopher closing the cycle got a *detect.DeadlockError, put its fork down and retried;\n")
	fmt.Fprintf(out, "meals: %v\n\n", t.meals)
	return deadlocks, reports, nil
}

// fixedTogether: philosophers taking the lower fork first, all at once,
// many meals each, in Order mode.
func fixedTogether(out io.Writer, meals int) ([]*detect.Report, error) {
	var log reportLog
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithReporter(log.add))()
	t := newTable()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for p := range philosophers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range meals {
				if err := t.eat(p, true, func() {}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	reports := log.all()
	fmt.Fprintf(out, "== fixed (lower-numbered fork first), all at once, Order mode\n")
	fmt.Fprintf(out, "meals: %v; detector reports: %d\n", t.meals, len(reports))
	return reports, nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func run(out io.Writer) error {
	if _, err := naiveInTurn(out); err != nil {
		return err
	}
	if _, _, err := naiveTogether(out); err != nil {
		return err
	}
	_, err := fixedTogether(out, 100)
	return err
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
