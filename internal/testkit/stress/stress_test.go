package stress_test

import (
	"context"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/stress"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	duration   = flag.Duration("stress.duration", 0, "run the stress mix this long per detection mode (0: a bounded CI run)")
	goroutines = flag.Int("stress.goroutines", 0, "goroutines per workload (0: the default)")
	only       = flag.String("stress.mode", "", "run only this detection mode (off, cycles or order)")
)

// TestStress runs the stress mix once per detection mode: a few small
// rounds by default, or for -stress.duration per mode, for example
//
//	go test -race ./internal/testkit/stress -run TestStress -stress.duration=1m -timeout 10m
func TestStress(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		if *only != "" && *only != mode.String() {
			continue
		}
		t.Run(mode.String(), func(t *testing.T) {
			cfg := stress.Config{Mode: mode, Duration: *duration, Goroutines: *goroutines}
			if *duration == 0 {
				cfg.Rounds = 8 // well under a second per mode under -race on two cores
				if testing.Short() {
					cfg.Ops = 20
				}
			}
			res, err := stress.Run(context.Background(), cfg)
			require.NoError(t, err)
			t.Log("\n" + res.String())
			assert.True(t, res.OK(), "anomalies:\n%s", res.String())
			assert.GreaterOrEqual(t, res.Rounds, stress.DefaultRounds)
			for _, p := range stress.Primitives {
				assert.Positive(t, res.Ops[p], "no operations on %s", p)
			}
			assert.Positive(t, res.Signals, "the exact-signal workloads signalled nothing")
			assert.Equal(t, res.Signals, res.Wakeups)
			assert.Zero(t, res.Reports)
		})
	}
}

// TestRunStopsWithContext checks that a done context stops Run after its
// minimum number of rounds, however long Duration is.
func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := stress.Run(ctx, stress.Config{Mode: detect.Cycles, Duration: time.Hour, Rounds: 1, Ops: 5, Goroutines: 2})
	require.NoError(t, err)
	assert.Equal(t, 1, res.Rounds)
	assert.True(t, res.OK(), res.String())
}

func TestRunRejectsBadConfig(t *testing.T) {
	for _, cfg := range []stress.Config{
		{Mode: detect.Mode(7)},
		{Duration: -time.Second},
		{Goroutines: -1},
		{Ops: -1},
		{Rounds: -1},
	} {
		_, err := stress.Run(context.Background(), cfg)
		assert.Error(t, err, "%+v", cfg)
	}
}

// TestRunRestoresDetectConfig checks that Run puts the detector's
// configuration back as it found it.
func TestRunRestoresDetectConfig(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Cycles))()
	_, err := stress.Run(context.Background(), stress.Config{Mode: detect.Order, Rounds: 1, Ops: 5, Goroutines: 2})
	require.NoError(t, err)
	assert.Equal(t, detect.Cycles, detect.CurrentMode())
}

// TestStressSwitchingModes runs the stress mix while a goroutine keeps
// switching the detector between Off, Cycles and Order, so that locks are
// taken in one mode and released or waited for in another.
func TestStressSwitchingModes(t *testing.T) {
	before := detect.CurrentMode() // the mode the process started in (LOCKSMITH_DETECT)
	cfg := stress.Config{Mode: detect.Cycles, SwitchModes: true, Duration: *duration, Goroutines: *goroutines}
	if *duration == 0 {
		cfg.Rounds = 4
		if testing.Short() {
			cfg.Ops = 20
		}
	}
	res, err := stress.Run(context.Background(), cfg)
	require.NoError(t, err)
	t.Log("\n" + res.String())
	assert.True(t, res.OK(), "anomalies:\n%s", res.String())
	assert.Positive(t, res.ModeSwitches)
	for _, p := range stress.Primitives {
		assert.Positive(t, res.Ops[p], "no operations on %s", p)
	}
	assert.Positive(t, res.Signals, "the exact-signal workloads signalled nothing")
	assert.Equal(t, res.Signals, res.Wakeups)
	assert.Zero(t, res.Reports)
	assert.Equal(t, before, detect.CurrentMode(), "Run and its mode switches left the mode changed")
}
