// Package leakprof holds the tests that Go's goroutine leak profile
// (runtime/pprof's "goroutineleak", under GOEXPERIMENT=goroutineleakprofile)
// sees through locksmith's locks as it sees through package sync's: a
// goroutine blocked for good on a lock, Cond or RWLock that no runnable
// goroutine can reach is reported leaked, and so are the goroutines stuck
// behind it; one blocked on a lock that a runnable goroutine can reach is
// not.
//
// The tests are in a package of their own because the goroutines they
// leak stay blocked for the life of the test binary: a goroutine the
// profile marks leaked must never be woken (the runtime would throw), so
// nothing may reach them again, and the other packages' tests must not
// see them. They build only with the experiment on (the build tag
// goexperiment.goroutineleakprofile); other toolchains and builds skip
// them, as does -tags purego, where the scans that run after every
// collection read weak pointers with Value (see internal/rt), which keeps
// the locks they look at reachable through a collection they overlap.
// The package has no code of its own.
package leakprof
