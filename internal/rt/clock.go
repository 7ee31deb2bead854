//go:build !purego

package rt

import _ "unsafe" // for go:linkname

// Nanotime is the runtime's monotonic clock, the one the scheduler uses.
// It is real time everywhere, also inside a testing/synctest bubble, where
// time.Now and time.Since read the bubble's fake clock. The runtime keeps
// this linkname working on purpose (runtime/time_nofake.go,
// go.dev/issue/67401).
//
//go:linkname Nanotime runtime.nanotime
func Nanotime() int64
