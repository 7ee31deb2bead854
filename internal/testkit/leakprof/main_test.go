//go:build goexperiment.goroutineleakprofile && !purego

package leakprof_test

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// The goroutines that the tests leave blocked for good: each test that
// leaves some takes a goleak snapshot once they are all parked (see
// keepStuck), and the check at the end ignores what the snapshots saw.
// A snapshot also holds the goroutines of the test and of package testing
// then running, which have ended by the check, and whose IDs no new
// goroutine takes.
var kept struct {
	mu   sync.Mutex
	opts []goleak.Option
}

// keepStuck records that the goroutines a test left blocked, parked by
// now, stay so: it snapshots every goroutine.
func keepStuck() {
	kept.mu.Lock()
	kept.opts = append(kept.opts, goleak.IgnoreCurrent())
	kept.mu.Unlock()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		kept.mu.Lock()
		opts := kept.opts
		kept.mu.Unlock()
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
