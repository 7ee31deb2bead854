package core

import "github.com/locksmith-go/locksmith/internal/rt"

// nanotime is the detector's clock: rt.Nanotime, the runtime's monotonic
// clock, which is real time everywhere, also inside a testing/synctest
// bubble, where time.Now and time.Since read the bubble's fake clock. The
// detector's clock (starvation mode, wait ages, the wait-timeout
// watchdog) must not mix the two, and fake time must not decide whether a
// lock is starving.
func nanotime() int64 { return rt.Nanotime() }

// Now returns the clock that WaitInfo.Since is measured on.
func Now() int64 { return rt.Nanotime() }
