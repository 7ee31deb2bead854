package core

import "github.com/locksmith-go/locksmith/internal/rt"

// sync.Mutex's spinning primitives, from rt.

// runtime_canSpin reports whether spinning makes sense at the moment (i
// counts the caller's rounds; from 4 on it says no, so spin passes 0 and
// counts its own rounds). See rt.CanSpin.
func runtime_canSpin(i int) bool { return rt.CanSpin(i) }

// runtime_doSpin spins for a short while. See rt.DoSpin.
func runtime_doSpin() { rt.DoSpin() }
