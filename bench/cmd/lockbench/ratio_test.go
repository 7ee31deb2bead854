package main

import (
	"io"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/bench"
)

// TestPairedRatio: a ratio is the median of the per-round ratios, with
// their quartiles (interpolated between ranks) and extremes, not the
// ratio of the two medians.
func TestPairedRatio(t *testing.T) {
	tests := []struct {
		name      string
		xs, bases []float64
		want      ratioStat
	}{{
		// The medians, 13.26 and 11, come from different rounds; their
		// ratio would be 1.21.
		name:  "odd count, medians from different rounds",
		xs:    []float64{10, 13.26, 14.3},
		bases: []float64{10, 13, 11},
		want:  ratioStat{Median: 1.02, Q1: 1.01, Q3: 1.16, Min: 1, Max: 1.3},
	}, {
		// Per-round ratios 1, 2, 3, 4 (out of order); ratio of medians
		// 25/10 = 2.5 too, but the quartiles are the ratios'.
		name:  "even count",
		xs:    []float64{30, 10, 40, 20},
		bases: []float64{10, 10, 10, 10},
		want:  ratioStat{Median: 2.5, Q1: 1.75, Q3: 3.25, Min: 1, Max: 4},
	}, {
		// Ratios 2, 0.5, 1, 4: median 1.5. The medians of the values,
		// 2.5 and 2, would give 1.25.
		name:  "even count, medians from different rounds",
		xs:    []float64{2, 1, 3, 8},
		bases: []float64{1, 2, 3, 2},
		want:  ratioStat{Median: 1.5, Q1: 0.875, Q3: 2.5, Min: 0.5, Max: 4},
	}, {
		name:  "one round",
		xs:    []float64{3},
		bases: []float64{2},
		want:  ratioStat{Median: 1.5, Q1: 1.5, Q3: 1.5, Min: 1.5, Max: 1.5},
	}, {
		name:  "a round without a baseline is left out",
		xs:    []float64{4, 1, 9},
		bases: []float64{2, 0, 3},
		want:  ratioStat{Median: 2.5, Q1: 2.25, Q3: 2.75, Min: 2, Max: 3},
	}, {
		name:  "no round with a baseline",
		xs:    []float64{1, 2},
		bases: []float64{0, 0},
		want:  ratioStat{},
	}, {
		name: "no rounds",
		want: ratioStat{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pairedRatio(tt.xs, tt.bases)
			assert.InDelta(t, tt.want.Median, got.Median, 1e-9, "median")
			assert.InDelta(t, tt.want.Q1, got.Q1, 1e-9, "q1")
			assert.InDelta(t, tt.want.Q3, got.Q3, 1e-9, "q3")
			assert.InDelta(t, tt.want.Min, got.Min, 1e-9, "min")
			assert.InDelta(t, tt.want.Max, got.Max, 1e-9, "max")
		})
	}
}

func TestQuantile(t *testing.T) {
	s := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
	assert.Equal(t, 11.0, quantile(s, 0.5))
	assert.Equal(t, 6.0, quantile(s, 0.25), "the 6th of 21")
	assert.Equal(t, 16.0, quantile(s, 0.75), "the 16th of 21")
	assert.Equal(t, 1.0, quantile(s, 0))
	assert.Equal(t, 21.0, quantile(s, 1))
	assert.Equal(t, 2.5, quantile([]float64{1, 2, 3, 4}, 0.5))
	assert.Equal(t, 7.0, quantile([]float64{7}, 0.75))
}

// scripted returns a cell named name whose k-th run (warm-up included)
// returns ops operations in cpu[k] ns of user CPU time and wall[k] ns of
// real time, and appends name to *order on each run.
func scripted(name string, ops int64, wall, cpu []float64, order *[]string) cell {
	k := 0
	return cell{name: name, run: func() (sample, error) {
		*order = append(*order, name)
		r := bench.Result{Ops: ops, Wall: time.Duration(math.Round(wall[k] * float64(ops))), User: time.Duration(math.Round(cpu[k] * float64(ops)))}
		k++
		return sample{res: r}, nil
	}}
}

// TestSectionRatiosArePaired: the uncontended section's ratios and the
// Monitor-against-Mutex target are the medians of the per-round ratios.
// The script is a machine whose speed changes between rounds: the
// medians of the values come from different rounds, and dividing them
// gives other figures.
func TestSectionRatiosArePaired(t *testing.T) {
	cfg := config{rounds: 3, warmup: 1}
	// ns per pair, warm-up round first; real and CPU time alike.
	script := []struct {
		name string
		ns   []float64
	}{
		{"sync.Mutex", []float64{99, 5, 6.5, 5.5}},
		{bench.FloorName, []float64{99, 10, 13, 11}},
		{"mutex.Mutex/detect=cycles", []float64{99, 7, 9.1, 7.7}},           // 0.70x the floor each round
		{"monitor.Monitor/detect=cycles", []float64{99, 10, 13.26, 14.3}},   // 1, 1.02, 1.3 the floor
		{"monitor.Monitor.depth2/detect=cycles", []float64{99, 6, 9.1, 11}}, // 0.6, 0.7, 1 the floor
	}
	var order []string
	var cells []cell
	for _, s := range script {
		cells = append(cells, scripted(s.name, 1000, s.ns, s.ns, &order))
	}
	sec, err := simpleSection(cfg, newProgress(io.Discard, true), kindPairs, "pairs", "a pair", 1000, cells)
	require.NoError(t, err)
	require.Len(t, sec.Rows, len(script))
	rows := map[string]*row{}
	for _, r := range sec.Rows {
		rows[r.Lock] = r
		assert.Equal(t, 3, r.Rounds, r.Lock)
	}
	mo := rows["monitor.Monitor/detect=cycles"]
	// Medians of the values: 13.26 and 11, whose ratio is 1.21.
	assert.InDelta(t, 13.26, mo.CPUNsPerOp.Median, 1e-6)
	assert.InDelta(t, 1.02, mo.FloorCPURatio.Median, 1e-6, "median of 1, 1.02, 1.3")
	assert.InDelta(t, 1.01, mo.FloorCPURatio.Q1, 1e-6)
	assert.InDelta(t, 1.16, mo.FloorCPURatio.Q3, 1e-6)
	assert.InDelta(t, 1.02, mo.FloorRatio.Median, 1e-6, "real time, the same")
	assert.InDelta(t, 2.04, mo.CPURatio.Median, 1e-6, "against sync.Mutex: 2, 2.04, 2.6")
	assert.InDelta(t, 0.7, rows["monitor.Monitor.depth2/detect=cycles"].FloorCPURatio.Median, 1e-6, "median of 0.6, 0.7, 1")
	assert.InDelta(t, 1, rows["sync.Mutex"].CPURatio.Median, 1e-9)
	assert.InDelta(t, 1, rows[bench.FloorName].FloorCPURatio.Median, 1e-9)

	rep := &report{Sections: []*section{sec}}
	ts := targets(rep)
	byQ := map[string]target{}
	for _, tg := range ts {
		byQ[tg.Question] = tg
	}
	// Monitor over Mutex round by round: 10/7, 13.26/9.1, 14.3/7.7, so
	// 1.4286, 1.4571, 1.8571; the medians' ratio would be 13.26/7.7.
	mm, ok := byQ["`monitor.Monitor` vs `mutex.Mutex`, first entry"]
	require.True(t, ok, "targets: %v", ts)
	assert.InDelta(t, 13.26/9.1, mm.Ratio.Median, 1e-6)
	assert.InDelta(t, (10.0/7+13.26/9.1)/2, mm.Ratio.Q1, 1e-6)
	assert.True(t, mm.AtMost)
	assert.Equal(t, 1.1, mm.Bound)
	assert.False(t, mm.Met)
	fl := byQ["`monitor.Monitor` first-entry pair vs floor pair"]
	assert.InDelta(t, 1.02, fl.Ratio.Median, 1e-6)
	assert.False(t, fl.Met, "1.02x is over 1.00x")
	mu := byQ["`mutex.Mutex` pair vs floor pair"]
	assert.InDelta(t, 0.7, mu.Ratio.Median, 1e-6)
	assert.True(t, mu.Met)
	re := byQ["`monitor.Monitor` re-entry pair (depth2) vs floor pair"]
	assert.InDelta(t, 0.7, re.Ratio.Median, 1e-6)
	assert.True(t, re.Met, "0.70x is under 0.80x")
}

// TestVisitOrder: the rounds visit the cells in turn, in reverse order
// every other round, so that each cell follows each of its two
// neighbours in turn; the samples stay in round order whatever the
// order of the visits.
func TestVisitOrder(t *testing.T) {
	assert.Equal(t, []int{0, 1, 2, 3}, visitOrder(0, 4))
	assert.Equal(t, []int{3, 2, 1, 0}, visitOrder(1, 4))
	assert.Equal(t, []int{0, 1, 2, 3}, visitOrder(2, 4))
	assert.Empty(t, visitOrder(1, 0))

	var order []string
	names := []string{"a", "b", "c"}
	var cells []cell
	for i, n := range names {
		// Cell i's k-th run takes 10*i+k ns per op.
		ns := []float64{float64(10 * i), float64(10*i + 1), float64(10*i + 2), float64(10*i + 3)}
		cells = append(cells, scripted(n, 1, ns, ns, &order))
	}
	samples, err := runCells(config{rounds: 3, warmup: 1}, newProgress(io.Discard, true), "order", "a run", cells)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c", "c", "b", "a", "a", "b", "c", "c", "b", "a"}, order)
	preceded := map[string]map[string]bool{}
	for k := 1; k < len(order); k++ {
		if preceded[order[k]] == nil {
			preceded[order[k]] = map[string]bool{}
		}
		preceded[order[k]][order[k-1]] = true
	}
	assert.Equal(t, map[string]bool{"a": true, "c": true}, preceded["b"], "b follows a and c in turn")
	for i := range names {
		require.Len(t, samples[i], 3, "the warm-up round is not counted")
		for k, s := range samples[i] {
			assert.Equal(t, time.Duration(10*i+k+1), s.res.Wall, "cell %d, counted round %d", i, k)
		}
	}
}
