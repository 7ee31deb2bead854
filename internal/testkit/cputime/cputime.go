// Package cputime reads the CPU time the process has used, all threads
// together. Benchmarks compare locks on it besides real time: on a machine
// shared with other processes, real time includes the time a goroutine was
// waiting for a CPU, while CPU time does not.
package cputime

import "time"

// Total returns the process's user plus system CPU time.
func Total() time.Duration {
	u, s := Split()
	return u + s
}
