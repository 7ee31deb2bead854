//go:build !amd64 || !gc || race || purego

package mutex

// Without the assembly fast path (other platforms, the race detector,
// which does not see atomics made in assembly, or the purego tag), Lock
// and Unlock are the Go code.

func lock(m *Mutex)   { lockGo(m) }
func unlock(m *Mutex) { unlockGo(m) }

// entrySkip is how many frames lie between lockGo and the caller of Lock:
// none, since lock and Lock are inlined into that caller.
const entrySkip = 0
