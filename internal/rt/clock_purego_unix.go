//go:build purego && unix

package rt

import "syscall"

// wallNanos reads the system's real-time clock.
func wallNanos() int64 {
	var tv syscall.Timeval
	if syscall.Gettimeofday(&tv) != nil {
		return 0 // before start: Nanotime stands still
	}
	return tv.Nano()
}
