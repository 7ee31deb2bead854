//go:build !amd64 || !gc || race || purego

package mutex

// Without the assembly fast paths (see fast_go.go), RWMutex's methods are
// the Go code.

func rwLock(rw *RWMutex)    { rwLockGo(rw) }
func rwUnlock(rw *RWMutex)  { rwUnlockGo(rw) }
func rwRLock(rw *RWMutex)   { rwRLockGo(rw) }
func rwRUnlock(rw *RWMutex) { rwRUnlockGo(rw) }
