package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/stress"
)

// soak runs the stress mix (internal/stress) for cfg.soak, a third of the
// time in each detect mode, prints each mode's result and a total, and
// returns exitError if any anomaly was found.
func soak(cfg config, stdout, stderr io.Writer) int {
	modes := []detect.Mode{detect.Off, detect.Cycles, detect.Order}
	each := cfg.soak / time.Duration(len(modes))
	var ops, anomalies int64
	for _, m := range modes {
		if !cfg.quiet {
			fmt.Fprintf(stderr, "lockbench: soak: %v in detect mode %v\n", each.Round(time.Millisecond), m)
		}
		res, err := stress.Run(context.Background(), stress.Config{Mode: m, Duration: each})
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
