package core

import _ "unsafe" // for go:linkname

// sync.Mutex's spinning primitives. The runtime keeps these linknames
// working on purpose (runtime/proc.go, go.dev/issue/67401).

// runtime_canSpin reports whether spinning makes sense at the moment: more
// than one CPU, no idle processor, and nothing else runnable on this one
// (i counts the caller's rounds; from 4 on it says no, so spin passes 0
// and counts its own rounds).
//
//go:linkname runtime_canSpin sync.runtime_canSpin
func runtime_canSpin(i int) bool

// runtime_doSpin spins for a short while: 30 PAUSE instructions on amd64.
//
//go:linkname runtime_doSpin sync.runtime_doSpin
func runtime_doSpin()
