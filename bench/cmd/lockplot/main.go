// Command lockplot draws a lockbench JSON report as SVG charts, the
// pictures of BENCHMARKS.md and the README:
//
//   - reentry.svg: CPU time per million uncontended Lock/Unlock pairs,
//     the seed's question (what a Monitor, its re-entry and an owner check
//     cost beside sync.Mutex and the floor lock), with the detection modes
//     that cost ten times more on a log axis of their own;
//   - contended.svg: throughput and CPU time per critical section against
//     goroutines;
//   - rwmix.svg: the same for the read-write locks' read-mostly mixes, at
//     90 % and 99 % reads.
//
// Each panel draws at most maxSeries locks (the baselines, locksmith's
// locks in the default detection mode and the peers they are compared
// with; the tables have every lock), and switches to a log axis when
// one lock's figures dwarf the rest (see needsLog). The legend has a
// column of its own, as wide as its longest name, inside the picture.
//
//	go run ./bench/cmd/lockbench -format json -workload all > run.json
//	go run ./bench/cmd/lockplot -out docs run.json
//
// -out DIR writes every chart the report has the sections for. -chart
// NAME -o FILE writes one (with -reads PERCENT, the read-mostly chart at
// that read share only). With no file argument lockplot reads the JSON
// from stdin. It is a program of its own so that lockbench, the
// repository's first command, does not compile gonum/plot: that is most
// of a first build's time.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The parts of lockbench's JSON report that the charts read.
type (
	report struct {
		Env    env `json:"env"`
		Rounds int `json:"rounds"`
		Work   struct {
			InsideNs int64 `json:"inside_ns"`
		} `json:"work"`
		Sections []*section `json:"sections"`
	}
	env struct {
		GoVersion string `json:"go_version"`
		GOOS      string `json:"goos"`
		GOARCH    string `json:"goarch"`
		CPU       string `json:"cpu"`
		NumCPU    int    `json:"num_cpu"`
	}
	section struct {
		Kind string `json:"kind"`
		Ops  int    `json:"ops"`
		Rows []*row `json:"rows"`
	}
	row struct {
		Lock       string     `json:"lock"`
		Goroutines int        `json:"goroutines"`
		Reads      int        `json:"reads_percent"`
		OpsPerSec  stat       `json:"ops_per_sec"`
		CPUNsPerOp stat       `json:"cpu_ns_per_op"`
		CPURatio   *ratioStat `json:"cpu_ratio"`
		FloorCPU   *ratioStat `json:"floor_cpu_ratio"`
	}
	stat struct {
		Median float64 `json:"median"`
	}
	ratioStat struct {
		Median float64 `json:"median"`
		Q1     float64 `json:"q1"`
		Q3     float64 `json:"q3"`
	}
)

// The Kinds of lockbench's sections that the charts draw.
const (
	kindPairs     = "pairs"
	kindContended = "contended"
	kindRWMix     = "rwmix"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stderr)) }

func run(args []string, stdin io.Reader, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	outDir := fs.String("out", "", "write every chart the report has to `DIR` ("+strings.Join(chartFiles(), ", ")+")")
	out := fs.String("o", "", "write one chart, -chart's, to `FILE.svg`")
	which := fs.String("chart", "contended", "the chart -o writes: `NAME`, one of "+strings.Join(chartNames(), ", "))
	reads := fs.Int("reads", 0, "with -o, draw the read-mostly chart at `PERCENT` reads only (90 or 99)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lockbench -format json | lockplot (-out DIR | -o FILE.svg [-chart NAME] [-reads PERCENT]) [results.json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 || (*outDir == "") == (*out == "") {
		fs.Usage()
		return 2
	}
	if *reads != 0 {
		*which = "rwmix"
	}
	in := stdin
	if fs.NArg() == 1 {
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			fmt.Fprintf(stderr, "lockplot: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	var rep report
	if err := json.NewDecoder(in).Decode(&rep); err != nil {
		fmt.Fprintf(stderr, "lockplot: reading lockbench's JSON: %v\n", err)
		return 1
	}
	if *out != "" {
		c, ok := chartNamed(*which)
		if !ok {
			fmt.Fprintf(stderr, "lockplot: -chart %q: must be one of %s\n", *which, strings.Join(chartNames(), ", "))
			return 2
		}
		if err := writeChart(*out, c, &rep, *reads); err != nil {
			fmt.Fprintf(stderr, "lockplot: %v\n", err)
			return 1
		}
		return 0
	}
	wrote := 0
	for _, c := range charts {
		if !c.has(&rep) {
			continue
		}
		name := filepath.Join(*outDir, c.file)
		if err := writeChart(name, c, &rep, 0); err != nil {
			fmt.Fprintf(stderr, "lockplot: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "lockplot: wrote %s\n", name)
		wrote++
	}
	if wrote == 0 {
		fmt.Fprintln(stderr, "lockplot: the report has none of the sections the charts draw (lockbench -workload headline, rw or all has them)")
		return 1
	}
	return 0
}

// writeChart draws c from rep and writes it to the file name.
func writeChart(name string, c chart, rep *report, reads int) error {
	fig, err := c.draw(rep, reads)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := fig.canvas.WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(name, portableFonts(buf.Bytes()), 0o644)
}

func chartNames() []string {
	var ns []string
	for _, c := range charts {
		ns = append(ns, c.name)
	}
	return ns
}

func chartFiles() []string {
	var ns []string
	for _, c := range charts {
		ns = append(ns, c.file)
	}
	return ns
}

func chartNamed(name string) (chart, bool) {
	i := slices.IndexFunc(charts, func(c chart) bool { return c.name == name })
	if i < 0 {
		return chart{}, false
	}
	return charts[i], true
}

// sectionOf returns rep's section of kind, or nil.
func sectionOf(rep *report, kind string) *section {
	for _, s := range rep.Sections {
		if s.Kind == kind {
			return s
		}
	}
	return nil
}

// work describes the work inside a critical section.
func work(rep *report) string {
	return "~" + time.Duration(rep.Work.InsideNs).String() + " of work"
}

// machine names the run's machine for a chart's title.
func machine(rep *report) string {
	e := rep.Env
	s := fmt.Sprintf("%s, %d cores, %s", e.CPU, e.NumCPU, e.GoVersion)
	if e.GOOS != "" {
		s += " " + e.GOOS + "/" + e.GOARCH
	}
	if rep.Rounds > 0 {
		s += fmt.Sprintf("; median of %d rounds", rep.Rounds)
	}
	return s
}
