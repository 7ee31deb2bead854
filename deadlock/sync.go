package deadlock

import "sync"

// The rest of go-deadlock's API: sync's types and sync.NewCond, passed
// through unchanged, so that its callers compile with only the import path
// changed. A Cond from NewCond is a *sync.Cond, as go-deadlock's is (code
// keeps it in *sync.Cond fields); its L is the caller's Mutex or RWMutex,
// whose Lock after the wait detect sees as any other.

// Cond is a sync.Cond wrapper.
type Cond struct {
	sync.Cond
}

// Locker is a sync.Locker wrapper.
type Locker struct {
	sync.Locker
}

// Once is a sync.Once wrapper.
type Once struct {
	sync.Once
}

// Pool is a sync.Pool wrapper.
type Pool struct {
	sync.Pool
}

// WaitGroup is a sync.WaitGroup wrapper.
type WaitGroup struct {
	sync.WaitGroup
}

// Map is a sync.Map wrapper.
type Map struct {
	sync.Map
}

// NewCond is sync.NewCond.
var NewCond = sync.NewCond

// MutexImpl is the method set of Mutex.
type MutexImpl interface {
	Lock()         // locks, as sync.Mutex's Lock
	Unlock()       // unlocks, as sync.Mutex's Unlock
	TryLock() bool // tries to lock, as sync.Mutex's TryLock
}

// RWMutexImpl is the method set of RWMutex.
type RWMutexImpl interface {
	Lock()                // locks for writing, as sync.RWMutex's Lock
	Unlock()              // unlocks for writing, as sync.RWMutex's Unlock
	RLock()               // locks for reading, as sync.RWMutex's RLock
	RUnlock()             // undoes one RLock, as sync.RWMutex's RUnlock
	TryLock() bool        // tries to lock for writing, as sync.RWMutex's TryLock
	TryRLock() bool       // tries to lock for reading, as sync.RWMutex's TryRLock
	RLocker() sync.Locker // returns the read side as a sync.Locker, as sync.RWMutex's RLocker
}

// StandardMutex is a sync.Mutex, without detection.
type StandardMutex struct {
	mu sync.Mutex
}

// Lock locks m: sync.Mutex.Lock.
func (m *StandardMutex) Lock() { m.mu.Lock() }

// Unlock unlocks m: sync.Mutex.Unlock.
func (m *StandardMutex) Unlock() { m.mu.Unlock() }

// TryLock tries to lock m and reports whether it succeeded:
// sync.Mutex.TryLock.
func (m *StandardMutex) TryLock() bool { return m.mu.TryLock() }

// StandardRWMutex is a sync.RWMutex, without detection.
type StandardRWMutex struct {
	mu sync.RWMutex
}

// Lock locks m for writing: sync.RWMutex.Lock.
func (m *StandardRWMutex) Lock() { m.mu.Lock() }

// Unlock unlocks m for writing: sync.RWMutex.Unlock.
func (m *StandardRWMutex) Unlock() { m.mu.Unlock() }

// RLock locks m for reading: sync.RWMutex.RLock.
func (m *StandardRWMutex) RLock() { m.mu.RLock() }

// RUnlock undoes a single RLock call: sync.RWMutex.RUnlock.
func (m *StandardRWMutex) RUnlock() { m.mu.RUnlock() }

// TryLock tries to lock m for writing and reports whether it succeeded:
// sync.RWMutex.TryLock.
func (m *StandardRWMutex) TryLock() bool { return m.mu.TryLock() }

// TryRLock tries to lock m for reading and reports whether it succeeded:
// sync.RWMutex.TryRLock.
func (m *StandardRWMutex) TryRLock() bool { return m.mu.TryRLock() }

// RLocker returns a sync.Locker whose Lock and Unlock call m.RLock and
// m.RUnlock: sync.RWMutex.RLocker.
func (m *StandardRWMutex) RLocker() sync.Locker { return m.mu.RLocker() }

var (
	_ MutexImpl   = (*Mutex)(nil)
	_ RWMutexImpl = (*RWMutex)(nil)
	_ MutexImpl   = (*StandardMutex)(nil)
	_ RWMutexImpl = (*StandardRWMutex)(nil)
)
