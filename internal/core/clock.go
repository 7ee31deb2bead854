package core

import _ "unsafe" // for go:linkname

// nanotime is the runtime's monotonic clock, the one the scheduler uses.
// It is real time everywhere, also inside a testing/synctest bubble, where
// time.Now and time.Since read the bubble's fake clock: the detector's
// clock (starvation mode, wait ages, the wait-timeout watchdog) must not
// mix the two, and fake time must not decide whether a lock is starving.
// The runtime keeps this linkname working on purpose (runtime/time_nofake.go,
// go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// Now returns the clock that WaitInfo.Since is measured on.
func Now() int64 { return nanotime() }
