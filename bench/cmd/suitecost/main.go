// Command suitecost measures what locksmith's detection modes cost real
// test suites under the race detector.
//
// For each project, a module of a well-tested open-source project at a
// pinned version, it
//
//   - downloads the module through the module proxy (go mod download) and
//     copies it twice to a work directory;
//   - rewrites one copy, test files included, so that every sync.Mutex and
//     sync.RWMutex is a locksmith mutex.Mutex and mutex.RWMutex (the
//     import of sync stays where the file still uses it for anything
//     else), and points its go.mod at this checkout of locksmith with a
//     replace directive; the other copy keeps the sync types and gets the
//     same go.mod and go.sum, so both build with the same dependencies;
//   - builds, once per copy, the test binary (go test -race -c) of each of
//     the project's packages whose tests link locksmith's mutex and detect
//     packages after the rewrite;
//   - runs the binaries in rounds, each round running the suites once with
//     the sync types and once with locksmith's in each LOCKSMITH_DETECT mode
//     (off, cycles, order), in turn, in reverse order every other round, and
//     records each run's CPU time (user plus system, from the process's
//     rusage, which includes the processes it waited for) and wall time,
//     summed over the project's packages;
//   - prints, per project, the median CPU and wall time of each mode, and
//     the ratios order/cycles, cycles/sync and order/sync, each the median
//     of the per-round ratios with the quartiles, as lockbench takes its
//     ratios (docs/development.md).
//
// A suite that passes with the sync types and fails after the rewrite is
// a finding: locksmith's types must pass correct suites unchanged.
// suitecost reports which test failed, in which mode and how (the failing
// tests and the first panic line, the output's tail kept in the work
// directory), and leaves that project out of the table. Each project's
// runs stop at its first failure.
//
// From the root of a checkout:
//
//	go run ./bench/cmd/suitecost
//
// measures the default projects (see -projects) in 5 rounds; a run takes
// a few minutes on two cores. Results go to stdout, progress to stderr.
// Run `suitecost -h` for every flag.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
