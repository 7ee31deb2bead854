//go:build race

package rt

// Hidden atomics, for race builds only: atomic operations that the race
// detector does not see, neither as synchronization nor as memory
// accesses. Order mode's per-goroutine records (package detect) use them
// where sync/atomic would order every goroutine after the goroutines that
// used the same record or flag before it, and so hide a data race between
// goroutines that never synchronize in the program; each is also a call
// into the race runtime, several times a plain access (go test -race -run
// '^$' -bench LonePair -cpu 1 ./detect times what they cost a lock taken
// alone). The memory such an operation guards must be
// touched only by //go:norace code, or the detector reports races on it.
//
// On amd64 and arm64 (without purego) they are assembly, which the race
// detector does not instrument (hidden_race_*.s); elsewhere they are
// sync/atomic's between runtime.RaceDisable and runtime.RaceEnable
// (hidden_race_other.go), which hide the synchronization only.
