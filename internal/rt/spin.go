//go:build !purego

package rt

import _ "unsafe" // for go:linkname

// sync.Mutex's spinning primitives. The runtime keeps these linknames
// working on purpose (runtime/proc.go, go.dev/issue/67401).

// CanSpin reports whether spinning makes sense at the moment: more than
// one CPU, no idle processor, and nothing else runnable on this one (i
// counts the caller's rounds; from 4 on it says no, so a caller that
// counts its own rounds passes 0).
//
//go:linkname CanSpin sync.runtime_canSpin
func CanSpin(i int) bool

// DoSpin spins for a short while: 30 PAUSE instructions on amd64.
//
//go:linkname DoSpin sync.runtime_doSpin
func DoSpin()
