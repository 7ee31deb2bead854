//go:build go1.25

package stress_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/stress"
)

// TestStressAcrossBubbles runs the stress mix with its bubble workload: a
// Mutex, a Monitor, a Cond, an RWMutex and an RWMonitor shared by
// goroutines outside any bubble and by two testing/synctest bubbles, in
// each detection mode.
// The last case also switches modes while the locks are held
// (Config.SwitchModes).
func TestStressAcrossBubbles(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      detect.Mode
		switching bool
	}{{"off", detect.Off, false}, {"cycles", detect.Cycles, false}, {"order", detect.Order, false}, {"switching", detect.Cycles, true}} {
		mode := tc.mode
		t.Run(tc.name, func(t *testing.T) {
			cfg := stress.Config{Mode: mode, SwitchModes: tc.switching, Rounds: 4, Bubble: func(body func()) {
				// t.Run, which may be called from several goroutines at
				// once: each bubble gets its own T.
				t.Run("bubble", func(t *testing.T) { synctest.Test(t, func(*testing.T) { body() }) })
			}}
			if testing.Short() {
				cfg.Ops = 20
			}
			res, err := stress.Run(context.Background(), cfg)
			require.NoError(t, err)
			assert.True(t, res.OK(), "anomalies:\n%s", res.String())
			assert.Zero(t, res.Reports)
			for _, p := range stress.Primitives {
				assert.Positive(t, res.Ops[p], "no operations on %s", p)
			}
		})
	}
}
