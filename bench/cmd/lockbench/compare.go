package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// compareReports writes to w how many of run's paired ratios have their
// median inside the interquartile range of the same ratio in ref (a
// published run, -compare), section by section, rounded to two decimals
// as the tables show them. A baseline's ratio to itself (IQR 1.00–1.00)
// is left out. It is how the default -rounds was chosen: a run with the
// default should land most of its medians inside the published IQRs.
func compareReports(w io.Writer, name string, ref, run *report) {
	type key struct {
		kind, lock, access, metric string
		g, batch, reads            int
	}
	iqrs := map[key]ratioStat{}
	ratios := func(r *row) map[string]*ratioStat {
		return map[string]*ratioStat{"ratio": r.Ratio, "cpu": r.CPURatio, "floor": r.FloorRatio, "floorcpu": r.FloorCPURatio}
	}
	for _, s := range ref.Sections {
		for _, r := range s.Rows {
			for m, q := range ratios(r) {
				if q != nil && q.Median != 0 && !(q.Q1 == 1 && q.Q3 == 1) {
					iqrs[key{s.Kind, r.Lock, r.Access, m, r.Goroutines, r.Batch, r.Reads}] = *q
				}
			}
		}
	}
	round := func(v float64) float64 { return math.Round(v*100) / 100 }
	var parts []string
	for _, s := range run.Sections {
		in, n := 0, 0
		for _, r := range s.Rows {
			for m, q := range ratios(r) {
				p, ok := iqrs[key{s.Kind, r.Lock, r.Access, m, r.Goroutines, r.Batch, r.Reads}]
				if !ok || q == nil || q.Median == 0 {
					continue
				}
				n++
				if v := round(q.Median); round(p.Q1) <= v && v <= round(p.Q3) {
					in++
				}
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", s.Kind, in, n))
		}
	}
	if len(parts) == 0 {
		fmt.Fprintf(w, "lockbench: -compare %s: no ratio of this run is in that report\n", name)
		return
	}
	fmt.Fprintln(w, wrap(fmt.Sprintf("lockbench: medians of this run's %d-round ratios inside the IQR of %s's %d rounds: %s",
		run.Rounds, name, ref.Rounds, strings.Join(parts, ", ")), wrapWidth(), "  "))
}
