//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package bench

import "time"

// cpuTimes reports no CPU time where getrusage is not available; the
// CPU columns then read zero.
func cpuTimes() (user, sys time.Duration) { return 0, 0 }

// CPUTimeAvailable reports whether CPU times are measured on this system.
const CPUTimeAvailable = false
