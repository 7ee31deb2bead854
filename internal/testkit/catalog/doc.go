// Package catalog is a catalogue of real blocking-bug shapes, as tests:
// double locking through a call chain, inside a String method or inside
// sync.Once; AB-BA and three-lock cycles across goroutines, formed or
// only possible; recursive RLock with a writer between and a read-to-write
// upgrade; a lock held across a channel send, receive, select,
// WaitGroup.Wait or Once.Do; a goroutine, a timer callback or a reader
// returning with the lock held; a read lock or another lock held across a
// Cond wait; a Cond nobody signals. Each is a TestBug test in
// testdata/shapes, beside its fixed twin, a TestFixed test that must pass
// without a report.
//
// The driver compiles testdata/shapes once with go test -c and runs each
// test in a process of its own with a deadline, so that the test binary's
// defaults apply and a bug's stuck goroutines stay in its process. A run
// is classified from its output: the report it made (deadlock, lock
// order, wait timeout, stuck waiter, or a misuse panic such as recursive
// locking), the Go runtime's "all goroutines are asleep" (not counted as
// found), hung (killed at the deadline), silent (passed without a report)
// or failed (ended otherwise).
//
// go test runs each shape once, without and with detect.VerifyNone, in
// the default configuration with LOCKSMITH_WAIT_TIMEOUT=2s, and checks
// that the fixed twins stay silent and that the shapes the library
// detects are found. The full table, every shape run 10 times in each
// configuration, is
//
//	LOCKSMITH_CATALOG=1 go test -count=1 -run TestCatalog -v -timeout 60m ./internal/testkit/catalog
//
// which prints a markdown table (LOCKSMITH_CATALOG_RUNS sets the number
// of runs).
package catalog
