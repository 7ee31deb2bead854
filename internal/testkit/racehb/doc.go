// Package racehb holds the tests that Go's race detector sees a data
// race between two goroutines that park on different locksmith locks,
// as it sees it with package sync's, and between two that wait on
// different Conds: the library's own bookkeeping on the park path (the
// registry of waits, the registry of Metas, the table of Cond waits and
// the list of Conds the watchdog reads, the counters and timers it
// arms) must not order the two (see internal/core/racehb_race.go); nor
// must, in Order mode, the goroutine table that holds each goroutine's
// records of its holds and the stack depot, so the tests also run two
// goroutines that each take a different lock alone, and one that nests
// locks beside one that does not (see detect/hbatomic_race.go).
//
// Each test runs a shape in a child process, the test binary re-executed,
// and counts the race reports the child prints: a race the parent
// process reported would fail the parent. The tests build only under
// -race (the build tag race). The package has no code of its own.
package racehb
