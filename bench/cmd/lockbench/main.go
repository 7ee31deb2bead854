// Command lockbench measures what locksmith's locks cost beside
// sync.Mutex, go-deadlock and reference spin and channel locks, and prints
// the tables of BENCHMARKS.md.
//
// With no flags it runs the headline in well under a minute on two cores:
//
//		go run ./bench/cmd/lockbench
//
//	  - uncontended Lock/Unlock pairs (default 1,000,000), in the shape of
//	    Ruby's Benchmark.bm (user, system, total and real seconds), with
//	    ns/pair and the ratio to sync.Mutex, for every lock, including a
//	    Monitor re-entered at depth 2 and 8 and locksmith's locks in each
//	    detection mode;
//	  - the same for two locks nested in a fixed order;
//	  - contended critical sections (about 100 ns of work inside the lock) at
//	    1, 2, 4 and 8 goroutines: ops/s, CPU-ns/op (user+system time of the
//	    process per operation, so spinning shows), cores in use, and the
//	    ratios of both to sync.Mutex.
//
// Each measurement is repeated -rounds times after -warmup rounds that are
// not counted (JRuby's Monitor cost 5.3x its Mutex cold and 2.15x warm);
// tables show the median with the min and max. Rounds visit the locks in
// turn, so that a noisy moment on a shared machine spreads over all of
// them. -latency adds a percentile table of lock-acquire latency
// (HdrHistogram); -workload pool runs Jetty's connection-pool workload and
// -workload batch the batch-queue workload instead; -format picks text,
// markdown, json or csv (lockplot charts the json). Results go to stdout,
// progress and diagnostics to stderr. Bad flags exit with status 2.
//
// Run `lockbench -h` for every flag.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
