// Command lockbench measures what locksmith's locks cost beside
// sync.Mutex, a floor lock, go-deadlock and reference spin and channel
// locks, and prints the tables of BENCHMARKS.md.
//
// With no flags it runs the headline, 7 counted rounds of each table,
// in about a minute on two idle cores:
//
//	go run ./bench/cmd/lockbench
//
// (go run builds first, about 40 s of CPU the first time; go build -o
// /tmp/lockbench ./bench/cmd/lockbench keeps the binary). Before
// measuring it prints its plan on stderr: each section, the runs it
// makes (a run is one lock measured once under one set of parameters)
// and about how long it takes; then a progress line per section. At the
// end the text output closes with a summary: what reentrancy and owner
// checks cost here against sync.Mutex and the floor lock, with the
// interquartile range over the rounds. The headline is:
//
//   - uncontended Lock/Unlock pairs (default 1,000,000), in the shape of
//     Ruby's Benchmark.bm (user, system, total and real seconds), with
//     ns/pair and the ratios to sync.Mutex and to the floor lock, for
//     every lock, including a Monitor re-entered at depth 2 and 8 (a pair
//     by a goroutine that already holds it once or 7 times) and
//     locksmith's locks in each detection mode;
//   - the same for two locks nested in a fixed order;
//   - contended critical sections (about 100 ns of work inside the lock) at
//     1, 2, 4 and 8 goroutines: ops/s, CPU-ns/op (user+system time of the
//     process per operation, so spinning shows), cores in use, and the
//     ratios of both to sync.Mutex.
//
// The floor lock (bench.FloorLock, "floor.GoidLock") is a measuring stick:
// one atomic word holding the owner's goroutine ID, goid.Get and one
// CompareAndSwap per call, waiters that only yield. Its row says what
// owner tracking costs at least on the machine that ran the tables.
//
// Each measurement is repeated -rounds times after -warmup rounds that are
// not counted (JRuby's Monitor cost 5.3x its Mutex cold and 2.15x warm);
// tables show the median with the min and max. A round visits every lock
// in turn, in reverse order every other round, so that no lock always
// runs right after the same one. Every ratio is paired: it is taken
// round by round, a lock's figure over its baseline's in the same round,
// and reported as the median of the per-round ratios with their
// interquartile range (the markdown and json outputs; the text tables
// show the median only), so that a spell in which the machine runs
// slower weighs on both sides of a ratio. -latency measures a percentile table of lock-acquire latency
// (HdrHistogram, with the clock's own overhead subtracted): alone it is
// the only table, with -workload headline or all it is added. -workload
// pool runs Jetty's connection-pool workload and -workload batch the
// batch-queue workload instead, and -workload rw the read-write locks'
// tables against sync.RWMutex (uncontended read and write pairs, and
// read-mostly mixes of 90 % and 99 % reads at each goroutine count);
// -workload all runs every table. -format picks text, markdown, json or
// csv. -from FILE measures nothing: it writes a report that -format json
// wrote in any format. BENCHMARKS.md and its charts (lockplot) come from
// one JSON report, by one command that the page itself names:
//
//	go run ./bench/cmd/lockbench -format json -workload all -latency -nested 20000 -rounds 21 > docs/benchmarks.json &&
//	  go run ./bench/cmd/lockbench -from docs/benchmarks.json -format markdown > BENCHMARKS.md &&
//	  go run ./bench/cmd/lockplot -out docs docs/benchmarks.json
//
// -compare FILE.json says, after the results, how many of the run's
// ratio medians fall inside the IQR of the same ratios in that report
// (docs/benchmarks.json is the published run).
//
// -soak DURATION measures nothing: it runs the stress mix of every
// primitive (internal/testkit/stress) for that long, a seventh of it in
// each detection mode, one switching modes while locks are held, two with
// locks shared across testing/synctest bubbles and one with readers
// stranded in deadlocked bubbles (those three skipped, and said so, in a
// build before Go 1.25), then prints the operations per primitive and
// the anomalies found, and exits with status 1 if there were any.
//
// JSON and CSV carry the start time, the Go version, the CPU and
// locksmith's version. Results go to stdout, progress and diagnostics to
// stderr. A bad flag prints a one-line usage and then the error, and exits
// with status 2.
//
// Run `lockbench -h` for every flag.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
