//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Available reports whether CPU times are measured on this system.
const Available = true

// Split returns the user and system CPU time the process has used, from
// getrusage(RUSAGE_SELF). It panics if getrusage fails, which it does only
// for an invalid argument: a zero would pass for a measurement.
func Split() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("cputime: getrusage: " + err.Error())
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}
