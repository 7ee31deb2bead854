package deadlock_test

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/locksmith-go/locksmith/deadlock" // was: "github.com/sasha-s/go-deadlock"
)

// A program written for go-deadlock: only its import path changed. Its
// two functions take the same two locks in opposite orders; the run does
// not hang, but another interleaving would, and the inversion is reported
// to LogBuf, then to OnPotentialDeadlock.
func Example() {
	var logBuf bytes.Buffer
	deadlock.Opts.DeadlockTimeout = 10 * time.Second
	deadlock.Opts.LogBuf = &logBuf
	deadlock.Opts.OnPotentialDeadlock = func() {
		// go-deadlock's default was os.Exit(2); this program counts.
		fmt.Println("potential deadlock reported:", strings.Contains(logBuf.String(), "POTENTIAL DEADLOCK:"))
	}

	var (
		accounts, audit deadlock.Mutex
		wg              deadlock.WaitGroup
	)
	transfer := func() {
		accounts.Lock()
		defer accounts.Unlock()
		audit.Lock()
		defer audit.Unlock()
	}
	report := func() {
		audit.Lock()
		defer audit.Unlock()
		accounts.Lock()
		defer accounts.Unlock()
	}
	wg.Add(1)
	go func() { defer wg.Done(); transfer() }()
	wg.Wait()
	report()
	// Output:
	// potential deadlock reported: true
}
