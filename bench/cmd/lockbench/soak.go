package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/stress"
)

// soakPhases are the phases of a soak, each run for an equal share of its
// time: one per detect mode, then one that keeps switching the mode
// between Off, Cycles and Order while locks are held (stress.Config's
// SwitchModes, over Cycles).
var soakPhases = []stress.Config{
	{Mode: detect.Off},
	{Mode: detect.Cycles},
	{Mode: detect.Order},
	{Mode: detect.Cycles, SwitchModes: true},
}

// soak runs the stress mix (internal/stress) for cfg.soak, a quarter of
// the time in each of soakPhases, prints each phase's result and a total,
// and returns exitError if any anomaly was found.
func soak(cfg config, stdout, stderr io.Writer) int {
	each := cfg.soak / time.Duration(len(soakPhases))
	var ops, anomalies int64
	for _, phase := range soakPhases {
		if !cfg.quiet {
			what := fmt.Sprintf("in detect mode %v", phase.Mode)
			if phase.SwitchModes {
				what = "switching detect modes while locks are held"
			}
			fmt.Fprintf(stderr, "lockbench: soak: %v %s\n", each.Round(time.Millisecond), what)
		}
		phase.Duration = each
		res, err := stress.Run(context.Background(), phase)
		if err != nil {
			fmt.Fprintf(stderr, "lockbench: soak: %v\n", err)
			return exitError
		}
		fmt.Fprint(stdout, res.String())
		fmt.Fprintln(stdout)
		ops += res.TotalOps()
		anomalies += int64(len(res.Anomalies) + res.DroppedAnomalies)
	}
	fmt.Fprintf(stdout, "soak: %v, %d operations, %d anomalies\n", cfg.soak, ops, anomalies)
	if anomalies > 0 {
		return exitError
	}
	return exitOK
}
