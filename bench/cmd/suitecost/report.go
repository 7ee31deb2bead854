package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locksmith-go/locksmith/bench"
)

// env is what the report's header says about the run.
type env struct {
	bench.Env
	goVersion string // of the go command that built the suites
	library   string // the locksmith checkout's commit
}

func environment(cfg config) env {
	e := env{Env: bench.Environment(), goVersion: "unknown", library: "unknown"}
	if out, err := goCmd(cfg.locksmith, "env", "GOVERSION"); err == nil {
		e.goVersion = strings.TrimSpace(string(out))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "git", "-C", cfg.locksmith, "describe", "--always", "--abbrev=12", "--dirty").Output(); err == nil {
		e.library = strings.TrimSpace(string(out))
	}
	return e
}

// ratios are the ones the table shows, numerator over denominator.
var ratios = [][2]string{{"order", "cycles"}, {"cycles", variantSync}, {"order", variantSync}, {"off", variantSync}}

// writeReport prints the header, the table of what was measured, the
// medians, the ratios and the failures.
func writeReport(w io.Writer, cfg config, e env, results []*result) {
	race := "-race"
	if !cfg.race {
		race = "no -race"
	}
	fmt.Fprintf(w, "suitecost: test suites with sync.Mutex and sync.RWMutex replaced by locksmith's (go test -c, %s)\n", race)
	fmt.Fprintf(w, "%s %s/%s, CPU: %s, %d cores, GOMAXPROCS %d; locksmith %s\n",
		e.goVersion, e.GOOS, e.GOARCH, e.CPU, e.NumCPU, e.GOMAXPROCS, e.library)
	fmt.Fprintf(w, "%d rounds after %d warm-up; CPU is user+system seconds of the test processes, wall is elapsed seconds,\n"+
		"both summed over a project's packages; medians over the rounds, ratios the median of the per-round ratios.\n",
		cfg.rounds, cfg.warmup)
	var flags []string
	if cfg.short {
		flags = append(flags, "-test.short")
	}
	if cfg.runRE != "" {
		flags = append(flags, "-test.run="+cfg.runRE)
	}
	if len(flags) > 0 {
		fmt.Fprintf(w, "Only part of the suites: %s.\n", strings.Join(flags, " "))
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "project\tpackages measured\trewritten\t-test.count\t-test.skip\t")
	for _, r := range results {
		var names []string
		for _, p := range r.pkgs {
			name := strings.TrimPrefix(strings.TrimPrefix(p.path, r.Module), "/")
			if name == "" {
				name = "."
			}
			names = append(names, name)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", r.project, strings.Join(names, ", "), r.rewrote,
			cmp.Or(cfg.count, r.Count, 1), cmp.Or(cfg.skipRE, r.Skip, "-"))
	}
	tw.Flush()

	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "project\tmode\tCPU s\tmin–max\twall s\tmin–max\t")
	for _, r := range results {
		if r.fail != nil || r.err != nil {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\n", r.Name, "failed, see below")
			continue
		}
		for i, v := range variants {
			name := r.Name
			if i > 0 {
				name = ""
			}
			cpu, wall := seconds(r.samples[v], false), seconds(r.samples[v], true)
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t%.2f–%.2f\t%.2f\t%.2f–%.2f\t\n", name, v,
				quantile(cpu, 0.5), cpu[0], cpu[len(cpu)-1], quantile(wall, 0.5), wall[0], wall[len(wall)-1])
		}
	}
	tw.Flush()

	// The ratios, for the projects measured, if any.
	if slices.ContainsFunc(results, func(r *result) bool { return r.fail == nil && r.err == nil }) {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "project\tratio\tCPU\tIQR\twall\tIQR\t")
		for _, r := range results {
			if r.fail != nil || r.err != nil {
				continue
			}
			for i, q := range ratios {
				name := r.Name
				if i > 0 {
					name = ""
				}
				c := pairedRatio(r.samples[q[0]], r.samples[q[1]], false)
				wl := pairedRatio(r.samples[q[0]], r.samples[q[1]], true)
				fmt.Fprintf(tw, "%s\t%s/%s\t%.2f\t%.2f–%.2f\t%.2f\t%.2f–%.2f\t\n", name, q[0], q[1],
					quantile(c, 0.5), quantile(c, 0.25), quantile(c, 0.75), quantile(wl, 0.5), quantile(wl, 0.25), quantile(wl, 0.75))
			}
		}
		tw.Flush()
	}

	for _, r := range results {
		switch {
		case r.err != nil:
			fmt.Fprintf(w, "\n%s: FAILED before measuring: %v\n", r.project, r.err)
		case r.fail != nil:
			f := r.fail
			what := "FAILED after the rewrite"
			if f.variant == variantSync {
				what = "FAILED with sync's types too (the suite itself, not the rewrite)"
			} else {
				what += " in LOCKSMITH_DETECT=" + f.variant
			}
			fmt.Fprintf(w, "\n%s: %s: %s: %v\n", r.project, what, f.pkg, f.err)
			if len(f.tests) > 0 {
				fmt.Fprintf(w, "  failing tests: %s\n", failingTests(f.tests))
			}
			if f.first != "" {
				fmt.Fprintf(w, "  first report: %s\n", f.first)
			}
			if f.log != "" {
				fmt.Fprintf(w, "  output: %s\n", f.log)
			}
		}
	}
	if len(results) > 0 {
		var skipped []string
		for _, r := range results {
			skipped = append(skipped, r.skipped...)
		}
		if len(skipped) > 0 {
			fmt.Fprintf(w, "\nnot measured (their tests link no locksmith lock after the rewrite): %s\n", strings.Join(skipped, ", "))
		}
	}
}

// failingTests lists the failing top-level tests, each with the number of
// its failing subtests, if any.
func failingTests(names []string) string {
	var tops []string
	subs := map[string]int{}
	for _, n := range names {
		top, _, sub := strings.Cut(n, "/")
		if !slices.Contains(tops, top) {
			tops = append(tops, top)
		}
		if sub {
			subs[top]++
		}
	}
	for i, t := range tops {
		switch n := subs[t]; n {
		case 0:
		case 1:
			tops[i] += " (1 subtest)"
		default:
			tops[i] += fmt.Sprintf(" (%d subtests)", n)
		}
	}
	return strings.Join(tops, ", ")
}

// seconds returns the sorted CPU (or wall) times of ss in seconds.
func seconds(ss []sample, wall bool) []float64 {
	xs := make([]float64, len(ss))
	for i, s := range ss {
		d := s.cpu
		if wall {
			d = s.wall
		}
		xs[i] = d.Seconds()
	}
	slices.Sort(xs)
	return xs
}

// pairedRatio returns the sorted ratios xs[k]/bases[k], round by round,
// of the CPU (or wall) times: a spell in which the shared machine runs
// slower then weighs on both sides of a ratio, which a ratio of two
// medians, each possibly from another round, would not.
func pairedRatio(xs, bases []sample, wall bool) []float64 {
	var rs []float64
	for k := range min(len(xs), len(bases)) {
		x, b := xs[k].cpu, bases[k].cpu
		if wall {
			x, b = xs[k].wall, bases[k].wall
		}
		if b > 0 {
			rs = append(rs, float64(x)/float64(b))
		}
	}
	slices.Sort(rs)
	return rs
}

// quantile returns the p-quantile of the sorted s, linearly interpolated
// between the two nearest ranks (R's type 7, as lockbench), or NaN for an
// empty s.
func quantile(s []float64, p float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
