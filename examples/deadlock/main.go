// Deadlock shows what package detect does with the textbook deadlock: two
// goroutines transferring money between two accounts, each locking the
// account it debits first, so that opposite transfers take the two locks
// in opposite orders.
//
// First in Cycles mode (the default), with the two transfers made to
// collide: the goroutine whose wait would close the cycle gets a
// *detect.DeadlockError from LockContext instead of hanging, and the
// report names both goroutines and locks. It releases what it holds, backs
// off and retries, and both transfers complete.
//
// Then in Order mode, with the same code run one transfer after the
// other, so that it cannot hang: the second transfer takes the locks in
// the order opposite to the first, and the detector reports the potential
// deadlock (a lock-order inversion) though this run never blocked.
//
// Run it with
//
//	go run ./examples/deadlock
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

// Account is a balance guarded by its own mutex.
type Account struct {
	mu      mutex.Mutex
	balance int // guarded by mu
}

func newAccount(name string, balance int) *Account {
	a := &Account{balance: balance}
	detect.SetName(&a.mu, name) // reports say "account A", not an address
	return a
}

// transfer moves n from one account to another. It locks the account it
// debits first: the order of the two locks depends on the direction of
// the transfer, which is the bug. holding runs once the first lock is
// held (the demo uses it to make two transfers collide).
func transfer(ctx context.Context, from, to *Account, n int, holding func()) error {
	from.mu.Lock()
	defer from.mu.Unlock()
	holding()
	// LockContext, not Lock: a deadlock then comes back as an error the
	// caller can act on, rather than as a panic.
	if err := to.mu.LockContext(ctx); err != nil {
		return err
	}
	defer to.mu.Unlock()
	from.balance -= n
	to.balance += n
	return nil
}

// transferWithRetry retries a transfer that would have deadlocked. By the
// time transfer returns the error, its deferred Unlock has released the
// first lock, which lets the other goroutine finish. Retrying at once
// could take that lock back before the other goroutine, woken, gets to it,
// and deadlock again; so it backs off first, holding nothing, until the
// lock it was refused is free: the other goroutine has finished with it.
func transferWithRetry(ctx context.Context, from, to *Account, n int, holding func()) (retries int, err error) {
	for {
		err := transfer(ctx, from, to, n, holding)
		if !errors.Is(err, detect.ErrDeadlock) {
			return retries, err
		}
		retries++
		if retries == 10 {
			return retries, err
		}
		holding = func() {} // collide only once
		to.mu.Lock()        // back off: wait our turn for the lock we were refused
		to.mu.Unlock()
	}
}

// reportLog collects the detector's reports.
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

// cyclesDemo makes two opposite transfers collide in Cycles mode. It
// returns how many times a LockContext returned a *detect.DeadlockError
// (once, or twice if both goroutines closed the cycle at the same moment).
func cyclesDemo(out io.Writer) (deadlocks int, err error) {
	var log reportLog
	defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithReporter(log.add))()
	a, b := newAccount("account A", 100), newAccount("account B", 100)

	// Each goroutine holds its first lock before either asks for its
	// second: the deadlock is certain, not a matter of timing.
	var both sync.WaitGroup
	both.Add(2)
	barrier := func() { both.Done(); both.Wait() }

	var wg sync.WaitGroup
	var retries [2]int
	var errs [2]error
	wg.Add(1)
	go func() {
		defer wg.Done()
		retries[0], errs[0] = transferWithRetry(context.Background(), a, b, 30, barrier)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		retries[1], errs[1] = transferWithRetry(context.Background(), b, a, 10, barrier)
	}()
	wg.Wait()
	if err := errors.Join(errs[0], errs[1]); err != nil {
		return 0, err
	}

	reports := log.all()
	fmt.Fprintf(out, "== Cycles mode: transfers A->B and B->A at the same time\n")
	fmt.Fprintf(out, "the detector's report (%d):\n\n", len(reports))
	for _, r := range reports {
		fmt.Fprintln(out, indent(r.String()))
	}
	fmt.Fprintf(out, "LockContext returned a *detect.DeadlockError to the goroutine closing the cycle, without the lock;\n")
	fmt.Fprintf(out, "it released the account it held, backed off and retried.\n")
	fmt.Fprintf(out, "both transfers done: A=%d B=%d (total %d)\n\n", a.balance, b.balance, a.balance+b.balance)
	return retries[0] + retries[1], nil
}

// orderDemo runs the same two transfers one after the other in Order
// mode: nothing can hang, and the inversion is reported anyway.
func orderDemo(out io.Writer) ([]*detect.Report, error) {
	var log reportLog
	defer detect.Configure(detect.WithMode(detect.Order), detect.WithReporter(log.add))()
	a, b := newAccount("account A", 100), newAccount("account B", 100)
	nothing := func() {}
	if err := transfer(context.Background(), a, b, 30, nothing); err != nil {
		return nil, err
	}
	if err := transfer(context.Background(), b, a, 10, nothing); err != nil {
		return nil, err
	}
	reports := log.all()
	fmt.Fprintf(out, "== Order mode: the same transfers, one after the other\n")
	fmt.Fprintf(out, "the detector's report (%d):\n\n", len(reports))
	for _, r := range reports {
		fmt.Fprintln(out, indent(r.String()))
	}
	fmt.Fprintf(out, "both transfers done: A=%d B=%d; this run never blocked, but another interleaving of it can\n", a.balance, b.balance)
	fmt.Fprintf(out, "fix: lock the two accounts in one global order (say, by account number) whatever the direction\n")
	return reports, nil
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

func run(out io.Writer) error {
	if _, err := cyclesDemo(out); err != nil {
		return err
	}
	_, err := orderDemo(out)
	return err
}

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
