package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/stress"
)

// soakPhase is one phase of a soak.
type soakPhase struct {
	cfg stress.Config
	// bubbles adds the workload that shares locks between goroutines
	// outside any testing/synctest bubble and those of two bubbles
	// (stress.Config.Bubble; see runWithBubbles).
	bubbles bool
	// strand adds the workload that strands readers in bubbles deadlocked
	// behind a writer outside (stress.Config.Strand; see runStranding).
	strand bool
}

func (p soakPhase) String() string {
	what := fmt.Sprintf("in detect mode %v", p.cfg.Mode)
	if p.cfg.SwitchModes {
		what = "switching detect modes while locks are held"
	}
	if p.bubbles {
		what += ", with locks shared across synctest bubbles"
	}
	if p.strand {
		what += ", with readers stranded in deadlocked synctest bubbles"
	}
	return what
}

// soakPhases are the phases of a soak, each run for an equal share of its
// time: one per detect mode, one that keeps switching the mode between
// Off, Cycles and Order while locks are held (stress.Config's
// SwitchModes, over Cycles), two with the bubble workload: in Order
// mode (whose wait-timeout watchdog must not be captured by a bubble) and
// switching modes, and last, since the goroutines it strands stay blocked
// until the process ends, one in Order mode that strands readers.
var soakPhases = []soakPhase{
	{cfg: stress.Config{Mode: detect.Off}},
	{cfg: stress.Config{Mode: detect.Cycles}},
	{cfg: stress.Config{Mode: detect.Order}},
	{cfg: stress.Config{Mode: detect.Cycles, SwitchModes: true}},
	{cfg: stress.Config{Mode: detect.Order}, bubbles: true},
	{cfg: stress.Config{Mode: detect.Cycles, SwitchModes: true}, bubbles: true},
	{cfg: stress.Config{Mode: detect.Order}, strand: true},
}

// soak runs the stress mix (internal/testkit/stress) for cfg.soak, an equal share
// of the time in each of soakPhases, prints each phase's result and a
// total, and returns exitError if any anomaly was found. A build without
// testing/synctest (before go1.25) skips the bubble phases and says so.
func soak(cfg config, stdout, stderr io.Writer) int {
	phases := soakPhases
	if !bubblesSupported {
		fmt.Fprintf(stderr, "lockbench: soak: the synctest bubble phases need go1.25; this is %s: skipped\n", runtime.Version())
		phases = slices.DeleteFunc(slices.Clone(phases), func(p soakPhase) bool { return p.bubbles || p.strand })
	}
	each := cfg.soak / time.Duration(len(phases))
	var ops, anomalies int64
	for _, phase := range phases {
		if !cfg.quiet {
			fmt.Fprintf(stderr, "lockbench: soak: %v %s\n", each.Round(time.Millisecond), phase)
		}
		pc := phase.cfg
		pc.Duration = each
		var (
			res stress.Result
			out string
			err error
		)
		switch {
		case phase.bubbles:
			res, out, err = runWithBubbles(context.Background(), pc)
		case phase.strand:
			res, out, err = runStranding(context.Background(), pc)
		default:
			res, err = stress.Run(context.Background(), pc)
		}
		if err != nil {
			fmt.Fprintf(stderr, "lockbench: soak: %s: %v\n%s", phase, err, out)
			return exitError
		}
		if phase.bubbles {
			fmt.Fprintln(stdout, "bubbles: locks shared by goroutines outside any bubble and those of two synctest bubbles")
		}
		if phase.strand {
			fmt.Fprintln(stdout, "stranding: readers of a synctest bubble deadlocked behind a writer outside it, which unlocks after")
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
