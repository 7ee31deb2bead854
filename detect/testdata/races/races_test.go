// Package races holds the data races that docs/detection.md compares
// VerifyNone with: the shapes of detect's testdata/verify (a parallel
// test, a subtest, a goroutine a test started, beside clean tests), each
// with a data race instead of a lock-order inversion. Run it with
//
//	cd detect/testdata/races && go test -race -json .
//
// to see which tests the race detector fails.
package races

import (
	"sync"
	"testing"
)

// race makes a data race: two goroutines write x unsynchronised.
func race() {
	var x int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); x = 1 }()
	x = 2
	wg.Wait()
	_ = x
}

func clean() {
	var mu sync.Mutex
	var x int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); mu.Lock(); x = 1; mu.Unlock() }()
	mu.Lock()
	x = 2
	mu.Unlock()
	wg.Wait()
	_ = x
}

func TestParallelRace(t *testing.T) {
	t.Parallel()
	race()
}

func TestParallelClean(t *testing.T) {
	t.Parallel()
	for i := 0; i < 1000; i++ {
		clean()
	}
}

func TestSubtestRace(t *testing.T) {
	t.Run("inner", func(t *testing.T) { race() })
	t.Run("clean", func(t *testing.T) { clean() })
}

func TestGoroutineRace(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); race() }()
	wg.Wait()
}

func TestClean(t *testing.T) { clean() }
