package verified

import (
	"runtime"
	"strings"
	"sync"
	"testing"

	"example.com/bank"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { detect.VerifyTestMain(m) }

func TestParallelInversion(t *testing.T) {
	detect.VerifyNone(t)
	t.Parallel()
	bank.BothWays()
}

func TestParallelClean(t *testing.T) {
	detect.VerifyNone(t)
	t.Parallel()
	bank.OneWay()
}

func TestSubtestInversion(t *testing.T) {
	detect.VerifyNone(t)
	t.Run("inner", func(t *testing.T) {
		detect.VerifyNone(t)
		bank.BothWays()
	})
	t.Run("clean", func(t *testing.T) {
		detect.VerifyNone(t)
		bank.OneWay()
	})
}

func TestGoroutineInversion(t *testing.T) {
	detect.VerifyNone(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bank.BothWays()
	}()
	wg.Wait()
}

func TestClean(t *testing.T) {
	detect.VerifyNone(t)
	bank.OneWay()
}

// TestLeavesWaiter returns while a goroutine it started holds a lock and
// blocks in a channel send, and another waits for the lock.
func TestLeavesWaiter(t *testing.T) {
	detect.VerifyNone(t)
	var mu mutex.Mutex
	held := make(chan struct{})
	go func() {
		mu.Lock()
		close(held)
		make(chan int) <- 1 // HOLDER BLOCKS
		mu.Unlock()
	}()
	<-held
	go func() {
		mu.Lock() // WAITER WAITS
		mu.Unlock()
	}()
	for !strings.Contains(dump(), "blocked goroutines: 1\n") {
		runtime.Gosched()
	}
}

func dump() string {
	var b strings.Builder
	detect.Dump(&b)
	return b.String()
}
