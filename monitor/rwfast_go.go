//go:build !amd64 || !gc || race || purego

package monitor

// Without the assembly fast paths (see fast_go.go), RWMonitor's methods
// are the Go code.

func rwLock(rw *RWMonitor)    { rwLockGo(rw) }
func rwUnlock(rw *RWMonitor)  { rwUnlockGo(rw) }
func rwRLock(rw *RWMonitor)   { rwRLockGo(rw) }
func rwRUnlock(rw *RWMonitor) { rwRUnlockGo(rw) }
