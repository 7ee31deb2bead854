package main

import (
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plotFile writes an SVG chart of the contended table: throughput (top)
// and CPU time per operation (bottom) against goroutines, one line per
// lock, medians only (the tables carry the spread).
func plotFile(name string, rep *report) error {
	var sec *section
	for _, s := range rep.Sections {
		if s.Kind == kindContended {
			sec = s
		}
	}
	if sec == nil {
		return fmt.Errorf("no contended results to plot")
	}
	svg, err := chart(sec, fmt.Sprintf("%s, %s, %d CPUs", rep.Env.GoVersion, rep.Env.CPU, rep.Env.NumCPU))
	if err != nil {
		return err
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := svg.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
		p.Title.Text = title
		p.X.Label.Text = "goroutines"
		p.Y.Label.Text = ylabel
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		return p
	}
	top := newPlot("Throughput ("+subtitle+")", "million critical sections per second")
	bottom := newPlot("CPU time per critical section (user+system, all cores)", "CPU-ns/op")
	legend := plot.NewLegend()
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
