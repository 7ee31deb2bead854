package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is a drawn chart and what was decided in drawing it, for the
// tests to check.
type figure struct {
	canvas *vgsvg.Canvas
	panels []panelInfo
}

type panelInfo struct {
	title  string
	series []string
	log    bool // the value axis is logarithmic
}

// logRatio is how far apart a panel's figures may be on a linear axis:
// when the largest is more than logRatio times the smallest, the smallest
// gets less than a quarter of the axis and the locks near it share its
// bottom, so the axis is logarithmic (or, in the bar chart, the far ones
// get a panel of their own).
const logRatio = 4

// splitRatio: in the bar chart, a lock more than splitRatio times the
// baseline, its first bar, goes to the log panel.
const splitRatio = 4

// needsLog reports whether the positive values vs span more than
// logRatio.
func needsLog(vs []float64) bool {
	var pos []float64
	for _, v := range vs {
		if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
			pos = append(pos, v)
		}
	}
	return len(pos) > 1 && slices.Max(pos) > logRatio*slices.Min(pos)
}

// chartFont is the face the charts are laid out with: Liberation Sans,
// whose metrics gonum/plot knows and which is metric-compatible with
// Arial and Helvetica.
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

// style returns a text style in chartFont at size points.
func style(size vg.Length) text.Style {
	s := plot.New().Title.TextStyle
	s.Font = chartFont
	s.Font.Size = size
	s.Handler = plot.DefaultTextHandler
	s.XAlign, s.YAlign = draw.XLeft, draw.YBottom
	return s
}

// palette: the baseline (first lock) black, then colours a reader with
// the common colour-vision deficiencies can still tell apart (Okabe and
// Ito's, with a grey), each line with its own dash pattern and marker
// too, so that the chart reads in greyscale.
var palette = []color.Color{
	color.RGBA{0, 0, 0, 255},
	color.RGBA{128, 128, 128, 255},
	color.RGBA{0, 114, 178, 255},
	color.RGBA{213, 94, 0, 255},
	color.RGBA{0, 158, 115, 255},
	color.RGBA{204, 121, 167, 255},
	color.RGBA{86, 180, 233, 255},
	color.RGBA{230, 159, 0, 255},
}

var dashes = [][]vg.Length{
	nil, {vg.Points(2), vg.Points(2)}, nil, {vg.Points(6), vg.Points(2)},
	{vg.Points(1), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}, {vg.Points(4), vg.Points(4)}, nil,
}

var shapes = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{},
}

// newPlot returns a plot whose texts are all in chartFont.
func newPlot(title string) *plot.Plot {
	p := plot.New()
	for _, t := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label} {
		t.Font.Typeface, t.Font.Variant = chartFont.Typeface, chartFont.Variant
	}
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(10.5)
	p.Title.Padding = vg.Points(6)
	p.Add(plotter.NewGrid())
	return p
}

// The canvas: a heading of two lines (what and where), then the panels
// and, for line charts, the legend's column at the right.
const (
	headingSize = vg.Length(12)
	pad         = vg.Length(10)
)

// heading draws the chart's title and the machine line at the top of c
// and returns the space left below them.
func heading(c draw.Canvas, title, sub string) draw.Canvas {
	t, s := style(headingSize), style(10)
	t.XAlign, s.XAlign = draw.XCenter, draw.XCenter
	t.YAlign, s.YAlign = draw.YTop, draw.YTop
	mid := (c.Min.X + c.Max.X) / 2
	y := c.Max.Y - pad
	c.FillText(t, vg.Point{X: mid, Y: y}, title)
	y -= t.Height(title) + 4
	c.FillText(s, vg.Point{X: mid, Y: y}, sub)
	y -= s.Height(sub) + pad
	return draw.Crop(c, 0, 0, 0, y-c.Max.Y)
}

// linePanel is one panel of a line chart: a line per lock, in the
// legend's order.
type linePanel struct {
	title, ylabel string
	lines         []plotter.XYs
}

// drawLines draws a grid of line panels against goroutines, all with the
// same locks, and one legend for them.
func drawLines(title, sub string, grid [][]linePanel, names []string, gs []int) (*figure, error) {
	fig := &figure{}
	var ticks []plot.Tick
	for _, g := range gs {
		ticks = append(ticks, plot.Tick{Value: float64(g), Label: fmt.Sprint(g)})
	}
	legend := plot.NewLegend()
	legend.TextStyle = style(10)
	legend.Top, legend.Left = true, true
	legend.ThumbnailWidth = vg.Points(36)
	legend.Padding = vg.Points(4)
	plots := make([][]*plot.Plot, len(grid))
	for i, rowPanels := range grid {
		for j, lp := range rowPanels {
			p := newPlot(lp.title)
			p.X.Label.Text = "goroutines"
			p.Y.Label.Text = lp.ylabel
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = plot.ConstantTicks(ticks)
			var ys []float64
			for _, l := range lp.lines {
				for _, xy := range l {
					ys = append(ys, xy.Y)
				}
			}
			log := needsLog(ys)
			setValueAxis(&p.Y, ys, log)
			for k, pts := range lp.lines {
				if len(pts) == 0 {
					continue
				}
				pts = positive(pts, log)
				l, s, err := plotter.NewLinePoints(pts)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", names[k], err)
				}
				l.Color, l.Dashes, l.Width = palette[k], dashes[k], vg.Points(1.5)
				if k == 0 {
					l.Width = vg.Points(2.5)
				}
				s.Color, s.Shape, s.Radius = palette[k], shapes[k], vg.Points(3.5)
				p.Add(l, s)
				if i == 0 && j == 0 {
					legend.Add(names[k], l, s)
				}
			}
			plots[i] = append(plots[i], p)
			fig.panels = append(fig.panels, panelInfo{title: lp.title, series: names[:len(lp.lines)], log: log})
		}
	}

	// The legend's column is as wide as its widest entry.
	var widest vg.Length
	for _, n := range names {
		widest = max(widest, legend.TextStyle.Width(" "+n))
	}
	legendWidth := legend.ThumbnailWidth + widest + 2*pad
	cols := len(grid[0])
	panelW, panelH := vg.Points(560), vg.Points(260)
	if cols > 1 {
		panelW = vg.Points(420)
	}
	w := vg.Length(cols)*panelW + legendWidth + 2*pad
	h := vg.Length(len(grid))*panelH + 60
	c := vgsvg.New(w, h)
	dc := heading(draw.New(c), title, sub)
	area := draw.Crop(dc, pad, -legendWidth-pad, pad, 0)
	tiles := draw.Tiles{Rows: len(grid), Cols: cols, PadX: vg.Points(16), PadY: vg.Points(16)}
	for i := range plots {
		for j := range plots[i] {
			plots[i][j].Draw(tiles.At(area, j, i))
		}
	}
	lc := draw.Crop(dc, dc.Max.X-dc.Min.X-legendWidth, -pad, 0, -vg.Points(24))
	legend.Draw(lc)
	fig.canvas = c
	return fig, nil
}

// setValueAxis fits a value axis to ys: from 0 on a linear axis, with a
// little room above; on a log axis from just below the least to just
// above the most, with powers of ten labelled.
func setValueAxis(a *plot.Axis, ys []float64, log bool) {
	if !log {
		a.Min = 0
		if len(ys) > 0 {
			a.Max = slices.Max(ys) * 1.08
		}
		return
	}
	lo, hi := math.Inf(1), 0.0
	for _, y := range ys {
		if y > 0 {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	a.Scale = plot.LogScale{}
	a.Tick.Marker = logTicks{}
	a.Min, a.Max = lo/1.25, hi*1.25
}

// positive replaces, on a log axis, a value that is not positive (a
// round that measured nothing) with the least positive one, which a log
// scale cannot draw otherwise.
func positive(pts plotter.XYs, log bool) plotter.XYs {
	if !log {
		return pts
	}
	out := slices.Clone(pts)
	for i := range out {
		if out[i].Y <= 0 {
			out[i].Y = math.SmallestNonzeroFloat64
		}
	}
	return out
}

// logTicks labels 1, 2 and 5 times each power of ten on a log axis, so
// that an axis spanning less than a decade still has labels.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			ts = append(ts, plot.Tick{Value: v, Label: tickLabel(v)})
		}
	}
	return ts
}

func tickLabel(v float64) string {
	if v >= 1 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

// bar is one lock's bar in a bar panel.
type bar struct {
	name  string
	value float64
	label string // drawn after the bar's end
}

type barPanel struct {
	title string
	bars  []bar
	log   bool
}

// drawBars draws bar panels one above the other, a bar per lock, named on
// the panel's left axis, so that no legend is needed.
func drawBars(title, sub, xlabel string, panels []barPanel) (*figure, error) {
	fig := &figure{}
	labelStyle := style(9.5)
	tickStyle := style(10)
	// Every panel shares one width; the names' column is as wide as the
	// widest name, and the value axis leaves room for the widest label.
	var nameW, labelW vg.Length
	for _, bp := range panels {
		for _, b := range bp.bars {
			nameW = max(nameW, tickStyle.Width(b.name))
			labelW = max(labelW, labelStyle.Width(b.label))
		}
	}
	const barsW = vg.Length(330) // the bars' room, labels excluded
	w := nameW + barsW + labelW + 4*pad + 20
	var plots [][]*plot.Plot
	var hs []vg.Length
	for _, bp := range panels {
		p := newPlot(bp.title)
		p.X.Label.Text = xlabel
		var vs []float64
		n := len(bp.bars)
		for _, b := range bp.bars {
			vs = append(vs, b.value)
		}
		p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
		p.HideY()
		// The value axis spans barsW from its start; the labels take
		// labelW more.
		frac := float64(barsW+labelW+pad) / float64(barsW)
		if bp.log {
			lo, hi := slices.Min(vs)/2, slices.Max(vs)
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = logTicks{}
			p.X.Min, p.X.Max = lo, lo*math.Pow(hi/lo, frac)
		} else {
			p.X.Min, p.X.Max = 0, slices.Max(vs)*frac
		}
		bars := &hbars{bars: bp.bars, style: labelStyle}
		p.Add(bars)
		plots = append(plots, []*plot.Plot{p})
		hs = append(hs, vg.Length(n)*28+70)
		fig.panels = append(fig.panels, panelInfo{title: bp.title, series: names(bp.bars), log: bp.log})
	}
	var h vg.Length = 70
	for _, ph := range hs {
		h += ph
	}
	c := vgsvg.New(w, h)
	dc := heading(draw.New(c), title, sub)
	// Panels of their own heights, one above the other.
	top := dc.Max.Y
	for i, p := range plots {
		area := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: dc.Min.X + pad, Y: top - hs[i]},
			Max: vg.Point{X: dc.Max.X - pad, Y: top},
		}}
		p[0].Draw(area)
		top -= hs[i] + pad
	}
	fig.canvas = c
	return fig, nil
}

func names(bs []bar) []string {
	var ns []string
	for _, b := range bs {
		ns = append(ns, b.name)
	}
	return ns
}

// hbars is a plotter of horizontal bars from the value axis's start,
// each in its lock's colour and followed by its label; bar i sits at
// category len-1-i, so that the first bar is at the top.
type hbars struct {
	bars  []bar
	style text.Style
}

func (h *hbars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	x0 := trX(p.X.Min)
	half := vg.Points(9)
	sty := h.style
	sty.YAlign = draw.YCenter
	for i, b := range h.bars {
		y := trY(float64(len(h.bars) - 1 - i))
		x1 := trX(b.value)
		c.FillPolygon(barColor(b.name), []vg.Point{{X: x0, Y: y - half}, {X: x0, Y: y + half}, {X: x1, Y: y + half}, {X: x1, Y: y - half}})
		c.FillText(sty, vg.Point{X: x1 + 4, Y: y}, b.label)
	}
	// The lock names, at the left of the axis.
	names := h.style
	names.Font.Size = 10
	names.XAlign, names.YAlign = draw.XRight, draw.YCenter
	for i, b := range h.bars {
		c.FillText(names, vg.Point{X: x0 - 6, Y: trY(float64(len(h.bars) - 1 - i))}, b.name)
	}
}

func (h *hbars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for _, b := range h.bars {
		xmin, xmax = min(xmin, b.value), max(xmax, b.value)
	}
	return xmin, xmax, -0.5, float64(len(h.bars)) - 0.5
}

// GlyphBoxes reserves the names' room at the left of the value axis, so
// that plot.Plot.Draw shrinks the data area to leave it.
func (h *hbars) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	names := h.style
	names.Font.Size = 10
	var bs []plot.GlyphBox
	for i, b := range h.bars {
		w := names.Width(b.name) + 8
		bs = append(bs, plot.GlyphBox{X: p.X.Norm(p.X.Min), Y: p.Y.Norm(float64(len(h.bars) - 1 - i)),
			Rectangle: vg.Rectangle{Min: vg.Point{X: -w, Y: -8}, Max: vg.Point{X: 0, Y: 8}}})
	}
	return bs
}

// barColor: baselines grey, locksmith's locks blue, the peers orange.
func barColor(name string) color.Color {
	switch {
	case name == "sync.Mutex" || name == "sync.RWMutex" || name == floorName:
		return color.RGBA{120, 120, 120, 255}
	case len(name) > 6 && (name[:6] == "mutex." || (len(name) > 8 && name[:8] == "monitor.")):
		return color.RGBA{0, 114, 178, 255}
	default:
		return color.RGBA{213, 94, 0, 255}
	}
}
