package bench_test

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBenchmarksRun runs every benchmark function once per sub-benchmark
// (b.N == 1), so that `go test ./...` keeps them compiling and working
// without -bench flags.
func TestBenchmarksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every sub-benchmark once; skipped in -short mode")
	}
	f := flag.Lookup("test.benchtime")
	require.NotNil(t, f, "test.benchtime flag")
	old := f.Value.String()
	require.NoError(t, f.Value.Set("1x"))
	t.Cleanup(func() { _ = f.Value.Set(old) })

	for name, fn := range map[string]func(*testing.B){
		"LockPairs":     BenchmarkLockPairs,
		"LockNested":    BenchmarkLockNested,
		"LockContended": BenchmarkLockContended,
		"CondPingPong":  BenchmarkCondPingPong,
		"ConnPool":      BenchmarkConnPool,
		"BatchQueue":    BenchmarkBatchQueue,
		"RWPairs":       BenchmarkRWPairs,
		"RWMix":         BenchmarkRWMix,
	} {
		t.Run(name, func(t *testing.T) {
			r := testing.Benchmark(fn)
			require.Positive(t, r.N, "benchmark %s did not run", name)
		})
	}
}
