package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"gonum.org/v1/plot/vg"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lockbenchJSON runs lockbench itself, briefly, for its JSON report, so
// that the charts are checked against what lockbench writes today.
func lockbenchJSON(t *testing.T) []byte {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	cmd := exec.Command(goCmd, "run", "../lockbench", "-format", "json", "-quiet", "-workload", "all",
		"-pairs", "2000", "-nested", "100", "-ops", "400", "-items", "100", "-batches", "1,10", "-rounds", "1", "-warmup", "0",
		"-goroutines", "1,2", "-locks", "mutex.Mutex/detect=off,monitor.Monitor/detect=off,go-deadlock.Mutex,spin.TTAS,"+
			"mutex.RWMutex/detect=off,go-deadlock.RWMutex")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "lockbench: %s", stderr.String())
	return out
}

func plotArgs(t *testing.T, stdin []byte, args ...string) (code int, stderr string) {
	t.Helper()
	var errOut bytes.Buffer
	code = run(args, bytes.NewReader(stdin), &errOut)
	return code, errOut.String()
}

// svgText is a text element of an SVG that is drawn unrotated, at its
// own x and y.
type svgText struct {
	x, y, size float64
	s          string
}

// parseSVG returns the canvas width and height of a gonum/plot SVG and
// its unrotated texts. gonum/plot draws in one group that flips the y
// axis; a text inside a further group (rotate or translate: the y axis
// label) is not at its own x and y, and is left out.
func parseSVG(t *testing.T, svg []byte) (w, h float64, texts []svgText) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	depth := 0
	sizeRe := regexp.MustCompile(`font-size:([0-9.]+)px`)
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSuffix(s, "pt"), 64)
		require.NoError(t, err, "number %q", s)
		return v
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch el.Name.Local {
			case "svg":
				w, h = num(attr["width"]), num(attr["height"])
			case "g":
				depth++
			case "text":
				var body string
				require.NoError(t, dec.DecodeElement(&body, &el))
				if depth != 1 {
					continue
				}
				m := sizeRe.FindStringSubmatch(attr["style"])
				require.NotNil(t, m, "a text's font size: %q", attr["style"])
				// y is negated: the text flips back the group's flip.
				texts = append(texts, svgText{x: num(attr["x"]), y: -num(attr["y"]), size: num(m[1]), s: body})
			}
		case xml.EndElement:
			if el.Name.Local == "g" {
				depth--
			}
		}
	}
	require.Positive(t, w)
	require.NotEmpty(t, texts)
	return w, h, texts
}

// checkLegible checks the properties the charts promise a reader: every
// text within the canvas, measured with the font the chart is laid out
// in, and the SVG naming portable font families only.
func checkLegible(t *testing.T, name string, svg []byte) {
	t.Helper()
	w, h, texts := parseSVG(t, svg)
	for _, tx := range texts {
		width := float64(style(vg.Length(tx.size)).Width(tx.s))
		assert.GreaterOrEqual(t, tx.x, 0.0, "%s: %q starts left of the canvas", name, tx.s)
		assert.LessOrEqual(t, tx.x+width, w, "%s: %q (at x=%.0f, %.0f wide) runs past the right edge, %.0f", name, tx.s, tx.x, width, w)
		assert.True(t, tx.y >= 0 && tx.y <= h, "%s: %q at y=%.0f is off a canvas %.0f high", name, tx.s, tx.y, h)
	}
	fams := regexp.MustCompile(`font-family:([^;"]*)`).FindAllStringSubmatch(string(svg), -1)
	require.NotEmpty(t, fams)
	for _, f := range fams {
		assert.Equal(t, "Liberation Sans,Arial,Helvetica,sans-serif", f[1], name)
	}
}

// textsOf returns the strings of svg's unrotated texts.
func textsOf(t *testing.T, svg []byte) []string {
	t.Helper()
	_, _, texts := parseSVG(t, svg)
	var out []string
	for _, tx := range texts {
		out = append(out, tx.s)
	}
	return out
}

func TestChartsOfLockbenchRun(t *testing.T) {
	out := lockbenchJSON(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "results.json")
	require.NoError(t, os.WriteFile(in, out, 0o644))
	code, stderr := plotArgs(t, nil, "-out", dir, in)
	require.Zero(t, code, stderr)
	for _, f := range []string{"reentry.svg", "contended.svg", "rwmix.svg"} {
		assert.Contains(t, stderr, "wrote "+filepath.Join(dir, f))
	}

	var rep report
	require.NoError(t, json.Unmarshal(out, &rep))
	for _, c := range charts {
		svg, err := os.ReadFile(filepath.Join(dir, c.file))
		require.NoError(t, err)
		checkLegible(t, c.file, svg)
		fig, err := c.draw(&rep, 0)
		require.NoError(t, err)
		texts := textsOf(t, svg)
		for _, p := range fig.panels {
			assert.LessOrEqual(t, len(p.series), maxSeries, "%s: %s", c.file, p.title)
			for _, s := range p.series {
				assert.Contains(t, texts, s, "%s names %s in its legend or on its axis", c.file, s)
			}
		}
		assert.Contains(t, strings.Join(texts, "\n"), "median of 1 rounds", "%s says how many rounds", c.file)
		assert.Contains(t, strings.Join(texts, "\n"), rep.Env.CPU, "%s names the CPU", c.file)
	}

	// go-deadlock takes microseconds a pair where the others take
	// nanoseconds: the reentry chart gives it a log panel and keeps
	// sync.Mutex, the reference, on a linear one. (Which panel the other
	// locks land in depends on this one-round run's figures, which a
	// loaded machine can inflate; the rule itself is tested on fixed
	// figures in TestLogAxisWhenOneLockDwarfs.)
	fig, err := reentryChart(&rep, 0)
	require.NoError(t, err)
	require.Len(t, fig.panels, 2)
	assert.False(t, fig.panels[0].log)
	assert.Contains(t, fig.panels[0].series, "sync.Mutex")
	assert.True(t, fig.panels[1].log)
	assert.Contains(t, fig.panels[1].series, "go-deadlock.Mutex")
	assert.ElementsMatch(t, []string{"sync.Mutex", "floor.GoidLock", "mutex.Mutex/detect=off", "monitor.Monitor/detect=off", "go-deadlock.Mutex"},
		append(append([]string(nil), fig.panels[0].series...), fig.panels[1].series...), "every lock is in one panel")

	// -o writes one chart.
	one := filepath.Join(dir, "one.svg")
	code, stderr = plotArgs(t, out, "-o", one, "-chart", "reentry")
	require.Zero(t, code, stderr)
	b, err := os.ReadFile(one)
	require.NoError(t, err)
	assert.Contains(t, string(b), "Owner checks and reentrancy")
}

// TestRWMixOneShare: -reads keeps one read share of the read-mostly
// chart.
func TestRWMixOneShare(t *testing.T) {
	rep := synthetic(map[string]float64{"sync.RWMutex": 100, "mutex.RWMutex/detect=off": 110}, kindRWMix, 90, 99)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	for _, reads := range []int{90, 99} {
		file := filepath.Join(t.TempDir(), "rw.svg")
		code, stderr := plotArgs(t, b, "-o", file, "-reads", strconv.Itoa(reads))
		require.Zero(t, code, stderr)
		svg, err := os.ReadFile(file)
		require.NoError(t, err)
		checkLegible(t, "rw.svg", svg)
		texts := strings.Join(textsOf(t, svg), "\n")
		assert.Contains(t, texts, fmt.Sprintf("%d %% reads: operations per second", reads))
		assert.NotContains(t, texts, fmt.Sprintf("%d %% reads", 189-reads))
		assert.Contains(t, texts, "mutex.RWMutex/detect=off")
	}
}

// synthetic returns a report with one section of kind whose locks have
// the given CPU-ns per op (and a throughput of 1e9 over it) at 1, 2 and 4
// goroutines, at each read share given (none: one set of rows).
func synthetic(cpu map[string]float64, kind string, shares ...int) *report {
	rep := &report{Rounds: 5}
	rep.Env.CPU, rep.Env.NumCPU, rep.Env.GoVersion = "Test CPU", 2, "go1.x"
	sec := &section{Kind: kind, Ops: 1000}
	if len(shares) == 0 {
		shares = []int{0}
	}
	for _, reads := range shares {
		for _, g := range []int{1, 2, 4} {
			for name, v := range cpu {
				gg := g
				if kind == kindPairs {
					gg = 0
				}
				sec.Rows = append(sec.Rows, &row{Lock: name, Goroutines: gg, Reads: reads,
					OpsPerSec: stat{Median: 1e9 / v}, CPUNsPerOp: stat{Median: v}})
			}
			if kind == kindPairs {
				break
			}
		}
	}
	rep.Sections = []*section{sec}
	return rep
}

// TestLogAxisWhenOneLockDwarfs: a panel whose largest figure is more than
// logRatio times its smallest gets a log axis; one whose figures are
// close keeps a linear axis from 0.
func TestLogAxisWhenOneLockDwarfs(t *testing.T) {
	close := map[string]float64{"sync.Mutex": 100, "mutex.Mutex/detect=cycles": 110, "monitor.Monitor/detect=cycles": 120, "chan": 300}
	fig, err := contendedChart(synthetic(close, kindContended), 0)
	require.NoError(t, err)
	require.Len(t, fig.panels, 2)
	assert.False(t, fig.panels[0].log, "throughput within 3x: linear")
	assert.False(t, fig.panels[1].log, "CPU within 3x: linear")

	far := map[string]float64{"sync.Mutex": 100, "mutex.Mutex/detect=cycles": 110, "go-deadlock.Mutex": 2000}
	fig, err = contendedChart(synthetic(far, kindContended), 0)
	require.NoError(t, err)
	assert.True(t, fig.panels[0].log, "throughput 20x apart: log")
	assert.True(t, fig.panels[1].log, "CPU 20x apart: log")

	fig, err = reentryChart(synthetic(close, kindPairs), 0)
	require.NoError(t, err)
	require.Len(t, fig.panels, 1, "no lock dwarfs the rest: one linear panel")
	assert.False(t, fig.panels[0].log)

	far["monitor.Monitor/detect=order"] = 500
	fig, err = reentryChart(synthetic(far, kindPairs), 0)
	require.NoError(t, err)
	require.Len(t, fig.panels, 2)
	assert.Equal(t, []string{"sync.Mutex", "mutex.Mutex/detect=cycles"}, fig.panels[0].series)
	assert.Equal(t, []string{"monitor.Monitor/detect=order", "go-deadlock.Mutex"}, fig.panels[1].series)
	assert.True(t, fig.panels[1].log)

	assert.False(t, needsLog([]float64{1, 4}))
	assert.True(t, needsLog([]float64{1, 4.1}))
	assert.False(t, needsLog([]float64{0, 1, 3}), "a zero is no figure to scale by")
}

// TestAtMostEightSeries: with every lock lockbench measures, each chart
// draws the baselines, locksmith's locks in the default mode and the
// peers, at most maxSeries.
func TestAtMostEightSeries(t *testing.T) {
	all := map[string]float64{}
	for _, n := range []string{"sync.Mutex", "floor.GoidLock", "sync.RWMutex", "go-deadlock.Mutex", "spin.TAS", "spin.TTAS", "chan"} {
		all[n] = 100
	}
	for _, n := range []string{"mutex.Mutex", "monitor.Monitor", "monitor.Monitor.depth2", "monitor.Monitor.depth8"} {
		for _, m := range modes(n) {
			all[m] = 100
		}
	}
	fig, err := contendedChart(synthetic(all, kindContended), 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"sync.Mutex", "floor.GoidLock", "mutex.Mutex/detect=cycles", "monitor.Monitor/detect=cycles",
		"monitor.Monitor.depth8/detect=cycles", "spin.TTAS", "chan", "go-deadlock.Mutex"}, fig.panels[0].series)
	fig, err = reentryChart(synthetic(all, kindPairs), 0)
	require.NoError(t, err)
	assert.Len(t, fig.panels[0].series, maxSeries)
	assert.Len(t, palette, maxSeries)
	assert.Len(t, dashes, maxSeries)
	assert.Len(t, shapes, maxSeries)
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "c.svg")
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string
	}{
		{"not JSON", "tables", []string{"-o", out}, 1, "reading lockbench's JSON"},
		{"no contended section", `{"sections":[{"kind":"pairs","rows":[]}]}`, []string{"-o", out}, 1, "no contended results"},
		{"nothing to draw", `{"sections":[{"kind":"batch","rows":[{"lock":"chan"}]}]}`, []string{"-out", dir}, 1, "none of the sections"},
		{"no mix at that read share", `{"sections":[{"kind":"rwmix","rows":[{"lock":"l","goroutines":1,"reads_percent":90}]}]}`,
			[]string{"-o", out, "-reads", "50"}, 1, "no read-mostly results with 50 % reads"},
		{"no lock the chart draws", `{"sections":[{"kind":"contended","rows":[{"lock":"l","goroutines":1},{"lock":"l","goroutines":2}]}]}`,
			[]string{"-o", out}, 1, "none of the contended locks"},
		{"missing input file", "", []string{"-o", out, filepath.Join(dir, "none.json")}, 1, "no such file"},
		{"two inputs", "", []string{"-o", out, "a.json", "b.json"}, 2, "usage: lockbench -format json | lockplot"},
		{"neither -o nor -out", "", nil, 2, "usage:"},
		{"both -o and -out", "", []string{"-o", out, "-out", dir}, 2, "usage:"},
		{"unknown chart", "{}", []string{"-o", out, "-chart", "pie"}, 2, "must be one of reentry, contended, rwmix"},
		{"bad flag", "", []string{"-x"}, 2, "flag provided but not defined"},
		{"one goroutine count", `{"sections":[{"kind":"contended","rows":[{"lock":"sync.Mutex","goroutines":1}]}]}`,
			[]string{"-o", out}, 1, "needs two or more"},
		{"unwritable output", `{"sections":[{"kind":"contended","rows":[{"lock":"sync.Mutex","goroutines":1},{"lock":"sync.Mutex","goroutines":2}]}]}`,
			[]string{"-o", filepath.Join(dir, "no", "dir", "c.svg")}, 1, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr := plotArgs(t, []byte(tc.stdin), tc.args...)
			assert.Equal(t, tc.code, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err), "no chart written on failure")
}

// TestPublishedCharts: the charts under docs/ are what lockplot draws
// from docs/benchmarks.json, the report BENCHMARKS.md is rendered from.
func TestPublishedCharts(t *testing.T) {
	docs := filepath.Join("..", "..", "..", "docs")
	dir := t.TempDir()
	code, stderr := plotArgs(t, nil, "-out", dir, filepath.Join(docs, "benchmarks.json"))
	require.Zero(t, code, stderr)
	for _, c := range charts {
		want, err := os.ReadFile(filepath.Join(dir, c.file))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(docs, c.file))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "docs/%s is not lockplot's drawing of docs/benchmarks.json: go run ./bench/cmd/lockplot -out docs docs/benchmarks.json", c.file)
	}
}
