// Package rt holds locksmith's couplings to Go runtime internals and
// private protocols: the linknames into the runtime, and the portable
// fallbacks that the purego build tag selects instead.
//
//   - Nanotime (clock.go): runtime.nanotime by //go:linkname, which the
//     runtime keeps reachable on purpose (runtime/time_nofake.go,
//     go.dev/issue/67401). Cannot check itself; a release that drops the
//     linkname stops programs from linking, loudly. Fallback
//     (clock_purego.go, purego): time.Since of a reading taken at
//     initialisation, standing still inside synctest bubbles.
//   - CanSpin, DoSpin (spin.go): sync.runtime_canSpin and
//     sync.runtime_doSpin by //go:linkname (runtime/proc.go, kept for
//     go.dev/issue/67401). Fallback (spin_purego.go, purego): spin while
//     more than one CPU, for 4 rounds of 30 loads.
package rt
