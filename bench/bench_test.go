package bench_test

import (
	"fmt"
	"testing"

	"github.com/locksmith-go/locksmith/bench"
)

// The benchmarks run each scenario helper against every lock as
// sub-benchmarks named after the lock ("mutex.Mutex/detect=order"), so
// that benchstat can compare locks, and modes (-col /detect), directly:
//
//	go test -run '^$' -bench . -count 10 ./bench/ > new.txt
//	benchstat new.txt
//
// Besides ns/op (real time per operation) they report ops/s and cpu-ns/op,
// the process's user plus system CPU time per operation, so that a lock
// which burns cores to win throughput shows it.

// Goroutine counts of the contended benchmarks.
var goroutineCounts = []int{1, 2, 4, 8}

// Batch sizes of the batch workload; 1 is one item at a time.
var batchSizes = []int{1, 10, 100, 1000}

func report(b *testing.B, r bench.Result) {
	b.ReportMetric(r.OpsPerSec(), "ops/s")
	b.ReportMetric(r.CPUNsPerOp(), "cpu-ns/op")
}

// BenchmarkLockPairs measures uncontended Lock/Unlock pairs; a Monitor's
// depth2 and depth8 variants measure a re-entry pair while already held.
func BenchmarkLockPairs(b *testing.B) {
	for _, l := range bench.Locks() {
		b.Run(l.Name, func(b *testing.B) {
			defer l.Configure()()
			b.ResetTimer()
			report(b, bench.Pairs(l, b.N))
		})
	}
}

// BenchmarkLockNested measures taking two locks in order and releasing
// them: the case where Order mode and go-deadlock record a lock order.
func BenchmarkLockNested(b *testing.B) {
	for _, l := range bench.FirstEntry(bench.Locks()) {
		b.Run(l.Name, func(b *testing.B) {
			defer l.Configure()()
			b.ResetTimer()
			report(b, bench.Nested(l, b.N))
		})
	}
}

// BenchmarkLockContended measures critical sections of about 100 ns with
// a little work between them at 1, 2, 4 and 8 goroutines. An op is one
// critical section; cores is the average number of cores busy.
func BenchmarkLockContended(b *testing.B) {
	ld := bench.Load{Inside: bench.Calibrate(bench.DefaultInside), Outside: bench.Calibrate(bench.DefaultOutside)}
	for _, l := range bench.Locks() {
		for _, g := range goroutineCounts {
			b.Run(fmt.Sprintf("%s/goroutines=%d", l.Name, g), func(b *testing.B) {
				defer l.Configure()()
				ld := ld
				ld.Goroutines, ld.Ops = g, b.N
				b.ResetTimer()
				r, err := bench.Contended(l, ld)
				if err != nil {
					b.Fatal(err)
				}
				report(b, r.Result)
				b.ReportMetric(r.Cores(), "cores")
			})
		}
	}
}

// BenchmarkCondPingPong measures a handoff between two goroutines through
// a condvar.Cond on each lock, a sync.Cond, and a pair of channels. An op
// is one handoff.
func BenchmarkCondPingPong(b *testing.B) {
	for _, l := range bench.Locks() {
		b.Run("condvar.Cond/"+l.Name, func(b *testing.B) {
			defer l.Configure()()
			b.ResetTimer()
			report(b, bench.CondPingPong(l, b.N))
		})
	}
	b.Run("sync.Cond", func(b *testing.B) { report(b, bench.SyncCondPingPong(b.N)) })
	b.Run("chan", func(b *testing.B) { report(b, bench.ChanPingPong(b.N)) })
}

// BenchmarkConnPool runs Jetty's connection-pool workload (4 goroutines
// acquiring, 3 releasing, 1 removing, capacity 250) on a pool guarded by
// each lock. An op is one acquisition; the rate of each kind of operation
// is reported as acquire/s, release/s and remove/s.
func BenchmarkConnPool(b *testing.B) {
	for _, l := range bench.FirstEntry(bench.Locks()) {
		b.Run(l.Name, func(b *testing.B) {
			defer l.Configure()()
			b.ResetTimer()
			r, err := bench.Pool(l, bench.DefaultPoolLoad(b.N))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(r.Rate(r.Acquires), "acquire/s")
			b.ReportMetric(r.Rate(r.Releases), "release/s")
			b.ReportMetric(r.Rate(r.Removes), "remove/s")
			b.ReportMetric(float64(r.CPU())/float64(max(1, r.Acquires)), "cpu-ns/op")
		})
	}
}

// BenchmarkBatchQueue moves 10,000 items per producer (two producers, two
// consumers) through a queue of 1000, one at a time (batch=1) or in
// batches, guarded by a monitor.Monitor in each detection mode, and
// through a buffered channel. An op is one whole run; items/s, ns/item
// and cpu-ns/item are per item.
func BenchmarkBatchQueue(b *testing.B) {
	type queue struct {
		name string
		run  func(bench.BatchLoad) (bench.Result, error)
		cfg  func() func()
	}
	var queues []queue
	for _, l := range bench.FirstEntry(bench.Locks()) {
		if l.Type == "monitor.Monitor" {
			queues = append(queues, queue{l.Name, bench.BatchQueue, l.Configure})
		}
	}
	queues = append(queues, queue{"chan", bench.BatchChan, func() func() { return func() {} }})
	for _, q := range queues {
		for _, size := range batchSizes {
			b.Run(fmt.Sprintf("%s/batch=%d", q.name, size), func(b *testing.B) {
				defer q.cfg()()
				var total bench.Result
				b.ResetTimer()
				for range b.N {
					r, err := q.run(bench.DefaultBatchLoad(size))
					if err != nil {
						b.Fatal(err)
					}
					total.Ops += r.Ops
					total.Wall += r.Wall
					total.User += r.User
					total.Sys += r.Sys
				}
				b.ReportMetric(total.OpsPerSec(), "items/s")
				b.ReportMetric(total.NsPerOp(), "ns/item")
				b.ReportMetric(total.CPUNsPerOp(), "cpu-ns/item")
			})
		}
	}
}

// Read percentages of the read-mostly mixes.
var readPercents = []int{90, 99}

// BenchmarkRWPairs measures uncontended RLock/RUnlock (read) and
// Lock/Unlock (write) pairs on each read-write lock; the depth2 rows are a
// re-entry by a goroutine already holding the monitor in the same mode.
func BenchmarkRWPairs(b *testing.B) {
	for _, op := range []struct {
		name string
		run  func(bench.Lock, int) bench.Result
	}{{"read", bench.ReadPairs}, {"write", bench.WritePairs}} {
		for _, l := range bench.RWLocks() {
			b.Run(op.name+"/"+l.Name, func(b *testing.B) {
				defer l.Configure()()
				b.ResetTimer()
				report(b, op.run(l, b.N))
			})
		}
	}
}

// BenchmarkRWMix measures read-mostly mixes (90 % and 99 % reads, about
// 100 ns of work inside the lock) at 1, 2, 4 and 8 goroutines on each
// read-write lock. An op is one read or write critical section.
func BenchmarkRWMix(b *testing.B) {
	inside, outside := bench.Calibrate(bench.DefaultInside), bench.Calibrate(bench.DefaultOutside)
	for _, reads := range readPercents {
		for _, l := range bench.RWLocks() {
			for _, g := range goroutineCounts {
				b.Run(fmt.Sprintf("reads=%d%%/%s/goroutines=%d", reads, l.Name, g), func(b *testing.B) {
					defer l.Configure()()
					ld := bench.RWLoad{Goroutines: g, Ops: b.N, ReadPercent: reads, Inside: inside, Outside: outside}
					b.ResetTimer()
					r, err := bench.RWMix(l, ld)
					if err != nil {
						b.Fatal(err)
					}
					report(b, r)
					b.ReportMetric(r.Cores(), "cores")
				})
			}
		}
	}
}
