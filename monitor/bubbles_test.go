//go:build go1.25

package monitor_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
	"github.com/locksmith-go/locksmith/monitor"
)

// A package-level Monitor, as a program shares it between tests that run
// in testing/synctest bubbles and code outside any.
var sharedMon monitor.Monitor

// Two bubbles and goroutines outside any hammer one package-level Monitor
// at the same time: nothing dies, and every acquisition is exclusive.
// Used by one bubble only afterwards, it blocks durably again.
func TestSynctestMonitorSharedAcrossBubbles(t *testing.T) {
	locktest.SharedAcrossBubbles(t, timedMonitor, &sharedMon)
	locktest.DurableInOneBubble(t, timedMonitor, &sharedMon)
}
