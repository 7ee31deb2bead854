//go:build go1.25

package stress_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"testing/synctest"
	"time"

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

const strandChildEnv = "LOCKSMITH_STRESS_STRAND_CHILD"

// TestStressStrandedReaders runs the stress mix with its stranding
// workload (Config.Strand), in each detection mode, in a child process:
// the bubbles deadlock on purpose, which fails the child's test, and
// their goroutines stay blocked for good. The parent checks the child's
// result line.
func TestStressStrandedReaders(t *testing.T) {
	if mode := os.Getenv(strandChildEnv); mode != "" {
		m, err := detect.ParseMode(mode)
		require.NoError(t, err)
		// Few operations: the stranding is once a round, whatever Ops.
		cfg := stress.Config{Mode: m, Rounds: 3, Ops: 20, Strand: func(body func()) (v any) {
			defer func() { v = recover() }()
			synctest.Test(t, func(*testing.T) { body() })
			return nil
		}}
		res, err := stress.Run(context.Background(), cfg)
		require.NoError(t, err)
		fmt.Print(res.String())
		fmt.Printf("stress-strand: ok %v, stranded %d, reports %d\n", res.OK(), res.Stranded, res.Reports)
		return
	}
	for _, mode := range []string{"off", "cycles", "order"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestStressStrandedReaders$", "-test.timeout=10m")
			cmd.Env = append(os.Environ(), strandChildEnv+"="+mode)
			out, _ := cmd.CombinedOutput() // the child fails: its bubbles deadlocked
			require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
			assert.NotContains(t, string(out), "fatal error")
			assert.Contains(t, string(out), fmt.Sprintf("stress-strand: ok true, stranded %d, reports 0\n", 3*2*3), "child output:\n%s", out)
		})
	}
}
