//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package bench

import (
	"syscall"
	"time"
)

// cpuTimes returns the user and system CPU time the process has used, all
// threads together, from getrusage(RUSAGE_SELF).
func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// CPUTimeAvailable reports whether CPU times are measured on this system.
const CPUTimeAvailable = true
