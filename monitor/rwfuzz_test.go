package monitor_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/fuzzmodel"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
)

// FuzzRWMonitor checks RWMonitor against a model of its semantics (see
// internal/testkit/fuzzmodel/rw.go), hold counts included. Run longer with
//
//	go test -run '^$' -fuzz '^FuzzRWMonitor$' -fuzztime 100000x ./monitor
func FuzzRWMonitor(f *testing.F) {
	for _, seed := range [][]byte{
		{1, 1, 9, 0, 1, 3},           // re-entrant reader passes a draining writer
		{0, 1, 2, 9 + 0, 3},          // downgrade with a writer queued
		{1, 0, 2, 3},                 // upgrade refused
		{0, 0, 4, 5, 2, 2, 2, 3},     // counted holds, try by the holder
		{1, 9 + 6, 18 + 7, 9 + 8, 3}, // cancel a draining writer with a reader queued
		{0, 9 + 1, 18 + 6, 2, 9 + 3, 18 + 8},
	} {
		f.Add(seed)
	}
	spec := fuzzmodel.RWFuzzLock{
		Reentrant: true,
		New:       func() testutil.RWLock { return new(monitor.RWMonitor) },
		Queues: func(l testutil.RWLock) (int, int) {
			return monitor.RWQueues(l.(*monitor.RWMonitor))
		},
		Draining: func(l testutil.RWLock) bool { return monitor.RWDraining(l.(*monitor.RWMonitor)) },
		Upgrade:  monitor.ErrUpgrade,
		NotOwner: monitor.ErrNotOwner,
		Holds: func(l testutil.RWLock) (int, int) {
			m := l.(*monitor.RWMonitor)
			return m.WriteHoldCount(), m.ReadHoldCount()
		},
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzmodel.RWFuzz(t, spec, data) })
}
