// Command lockplot draws the contended table of a lockbench run as an SVG
// chart: throughput (top) and CPU time per critical section (bottom)
// against goroutines, one line per lock, medians only (the tables carry
// the spread).
//
//	go run ./bench/cmd/lockbench -format json > results.json
//	go run ./bench/cmd/lockplot -o contended.svg results.json
//
// With -reads 90 (or 99) it draws the read-write locks' read-mostly mix
// at that read share instead (lockbench -workload rw or all):
//
//	go run ./bench/cmd/lockplot -reads 90 -o rwmix90.svg results.json
//
// With no file argument it reads the JSON from stdin. It is a program of
// its own so that lockbench, the repository's first command, does not
// compile gonum/plot: that is most of a first build's time.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// The parts of lockbench's JSON report that the chart reads.
type (
	report struct {
		Env      env        `json:"env"`
		Sections []*section `json:"sections"`
	}
	env struct {
		GoVersion string `json:"go_version"`
		CPU       string `json:"cpu"`
		NumCPU    int    `json:"num_cpu"`
	}
	section struct {
		Kind string `json:"kind"`
		Rows []*row `json:"rows"`
	}
	row struct {
		Lock       string `json:"lock"`
		Goroutines int    `json:"goroutines"`
		Reads      int    `json:"reads_percent"`
		OpsPerSec  stat   `json:"ops_per_sec"`
		CPUNsPerOp stat   `json:"cpu_ns_per_op"`
	}
	stat struct {
		Median float64 `json:"median"`
	}
)

// The Kinds of lockbench's sections that the chart draws: the contended
// table, and the read-write locks' read-mostly mixes.
const (
	kindContended = "contended"
	kindRWMix     = "rwmix"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stderr)) }

func run(args []string, stdin io.Reader, stderr io.Writer) int {
	fs := flag.NewFlagSet("lockplot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "contended.svg", "write the chart to `FILE.svg`")
	reads := fs.Int("reads", 0, "chart the read-write locks' read-mostly mix with `PERCENT` reads (90 or 99) instead of the contended table")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lockbench -format json | lockplot [-o FILE.svg] [-reads PERCENT] [results.json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
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
	if err := plotFile(*out, in, *reads); err != nil {
		fmt.Fprintf(stderr, "lockplot: %v\n", err)
		return 1
	}
	return 0
}

// plotFile reads a lockbench JSON report from in and writes to the file
// name the chart of its contended section or, if reads is not 0, of its
// read-mostly mix with that percentage of reads.
func plotFile(name string, in io.Reader, reads int) error {
	var rep report
	if err := json.NewDecoder(in).Decode(&rep); err != nil {
		return fmt.Errorf("reading lockbench's JSON: %w", err)
	}
	var sec *section
	for _, s := range rep.Sections {
		switch {
		case reads == 0 && s.Kind == kindContended:
			sec = s
		case reads != 0 && s.Kind == kindRWMix:
			sec = &section{Kind: s.Kind}
			for _, r := range s.Rows {
				if r.Reads == reads {
					sec.Rows = append(sec.Rows, r)
				}
			}
		}
	}
	if sec == nil || len(sec.Rows) == 0 {
		if reads != 0 {
			return fmt.Errorf("no read-mostly results with %d %% reads to plot (lockbench -workload rw or all has them, at 90 and 99 %%)", reads)
		}
		return errors.New("no contended results to plot (lockbench -workload headline or all has them)")
	}
	// The goroutine axis is logarithmic, over at least two counts.
	gs := goroutinesOf(sec)
	if len(gs) < 2 || slices.Min(gs) < 1 {
		return fmt.Errorf("goroutine counts %v: the chart needs two or more, all positive (lockbench -goroutines)", gs)
	}
	subtitle := fmt.Sprintf("%s, %s, %d CPUs", rep.Env.GoVersion, rep.Env.CPU, rep.Env.NumCPU)
	if reads != 0 {
		subtitle = fmt.Sprintf("%d %% reads; %s", reads, subtitle)
	}
	svg, err := chart(sec, subtitle)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := svg.WriteTo(&buf); err != nil {
		return err
	}
	return os.WriteFile(name, portableFonts(buf.Bytes()), 0o644)
}

// chartFont is the face the chart is laid out with: Liberation Sans, whose
// metrics gonum/plot knows and which is metric-compatible with Arial and
// Helvetica.
var chartFont = font.Font{Typeface: "Liberation", Variant: "Sans"}

// fontFallback is the font-family list the SVG names: Liberation Sans where
// it is installed, else Arial or Helvetica (same widths, so labels fit as
// laid out), else the viewer's sans-serif. Nothing needs installing.
const fontFallback = "Liberation Sans,Arial,Helvetica,sans-serif"

// portableFonts replaces the single family gonum/plot writes with
// fontFallback. Embedding the font instead (vgsvg.EmbedFonts) would add
// some 300 kB of base64 to a 10 kB chart.
func portableFonts(svg []byte) []byte {
	return bytes.ReplaceAll(svg, []byte("font-family:Liberation Sans;"), []byte("font-family:"+fontFallback+";"))
}

// goroutinesOf returns the goroutine counts of sec's rows, in order.
func goroutinesOf(sec *section) []int {
	var gs []int
	for _, r := range sec.Rows {
		if len(gs) == 0 || gs[len(gs)-1] != r.Goroutines {
			gs = append(gs, r.Goroutines)
		}
	}
	return gs
}

func chart(sec *section, subtitle string) (*vgsvg.Canvas, error) {
	var names []string
	lines := map[string][2]plotter.XYs{}
	for _, r := range sec.Rows {
		if _, ok := lines[r.Lock]; !ok {
			names = append(names, r.Lock)
		}
		xy := lines[r.Lock]
		xy[0] = append(xy[0], plotter.XY{X: float64(r.Goroutines), Y: r.OpsPerSec.Median / 1e6})
		xy[1] = append(xy[1], plotter.XY{X: float64(r.Goroutines), Y: r.CPUNsPerOp.Median})
		lines[r.Lock] = xy
	}

	var ticks []plot.Tick
	for _, g := range goroutinesOf(sec) {
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: fmt.Sprint(g)})
	}
	newPlot := func(title, ylabel string) *plot.Plot {
		p := plot.New()
		for _, t := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
			&p.X.Tick.Label, &p.Y.Tick.Label} {
			t.Font.Typeface, t.Font.Variant = chartFont.Typeface, chartFont.Variant
		}
		p.Title.Text = title
		p.X.Label.Text = "goroutines"
		p.Y.Label.Text = ylabel
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		return p
	}
	unit := "critical section"
	if sec.Kind == kindRWMix {
		unit = "operation" // a read or a write critical section
	}
	top := newPlot("Throughput ("+subtitle+")", "million "+unit+"s per second")
	bottom := newPlot("CPU time per "+unit+" (user+system, all cores)", "CPU-ns/op")
	legend := plot.NewLegend()
	legend.TextStyle.Font.Typeface, legend.TextStyle.Font.Variant = chartFont.Typeface, chartFont.Variant
	legend.Top, legend.Left = true, true
	for i, name := range names {
		for j, p := range []*plot.Plot{top, bottom} {
			l, s, err := plotter.NewLinePoints(lines[name][j])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			l.Color, l.Dashes = plotutil.Color(i), plotutil.Dashes(i/len(plotutil.DefaultColors))
			s.Color, s.Shape = plotutil.Color(i), plotutil.Shape(i)
			p.Add(l, s)
			if j == 0 {
				legend.Add(name, l, s)
			}
		}
	}

	const legendWidth = 3 * vg.Inch
	c := vgsvg.New(11*vg.Inch, 9*vg.Inch)
	dc := draw.New(c)
	charts := draw.Crop(dc, 0, -legendWidth, 0, 0)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: vg.Points(12), PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6)}
	plots := [][]*plot.Plot{{top}, {bottom}}
	canvases := plot.Align(plots, tiles, charts)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])
	legend.Draw(draw.Crop(dc, 11*vg.Inch-legendWidth+vg.Points(6), 0, 0, -vg.Points(12)))
	return c, nil
}
