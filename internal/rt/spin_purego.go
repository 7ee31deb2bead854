//go:build purego

package rt

import (
	"runtime"
	"sync/atomic"
)

// multicore is whether spinning can ever help: another CPU may run the
// holder meanwhile.
var multicore = runtime.NumCPU() > 1

// CanSpin reports whether spinning may make sense: more than one CPU, and
// i (the caller's rounds) under 4, as the runtime's own test counts them.
// Without the runtime's view of idle processors and run queues it cannot
// tell whether another goroutine waits for this processor.
func CanSpin(i int) bool { return multicore && i < 4 }

// spinWord is read, never written, by DoSpin's loop.
var spinWord atomic.Uint32

// DoSpin spins for a short while: 30 loads of a word no one writes, in
// place of the runtime's 30 PAUSE instructions.
func DoSpin() {
	for range 30 {
		spinWord.Load()
	}
}
