package fpstack_test

import (
	"runtime"
	"testing"

	"github.com/locksmith-go/locksmith/internal/fpstack"
)

// BenchmarkRecord takes a stack 16 calls deep below the benchmark's own
// frames, with Record and with runtime.Callers into the same buffer; the
// frames benchmark symbolises Record's, as a report does.
func BenchmarkRecord(b *testing.B) {
	var rec [1 + depth + 4]uintptr
	take := map[string]func() int{
		"fpstack.Record":  func() int { return fpstack.Record(0, rec[:]) },
		"runtime.Callers": func() int { return runtime.Callers(1, rec[1:]) },
	}
	for _, name := range []string{"fpstack.Record", "runtime.Callers"} {
		b.Run(name, func(b *testing.B) {
			n := 0
			at(16, func() {
				for i := 0; i < b.N; i++ {
					n += take[name]()
				}
			})
			b.ReportMetric(float64(n)/float64(b.N), "words/op")
		})
	}
	b.Run("fpstack.Frames", func(b *testing.B) {
		var n int
		at(16, func() { n = fpstack.Record(0, rec[:]) })
		for i := 0; i < b.N; i++ {
			if len(fpstack.Frames(rec[:n], depth)) == 0 {
				b.Fatal("no frames")
			}
		}
	})
}

// at calls f depth calls below its caller.
//
//go:noinline
func at(depth int, f func()) {
	if depth == 0 {
		f()
		return
	}
	at(depth-1, f)
}
