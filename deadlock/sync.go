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
	Lock()
	Unlock()
	TryLock() bool
}

// RWMutexImpl is the method set of RWMutex.
type RWMutexImpl interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()
	TryLock() bool
	TryRLock() bool
	RLocker() sync.Locker
}

// StandardMutex is a sync.Mutex, without detection.
type StandardMutex struct {
	mu sync.Mutex
}

func (m *StandardMutex) Lock()         { m.mu.Lock() }
func (m *StandardMutex) Unlock()       { m.mu.Unlock() }
func (m *StandardMutex) TryLock() bool { return m.mu.TryLock() }

// StandardRWMutex is a sync.RWMutex, without detection.
type StandardRWMutex struct {
	mu sync.RWMutex
}

func (m *StandardRWMutex) Lock()                { m.mu.Lock() }
func (m *StandardRWMutex) Unlock()              { m.mu.Unlock() }
func (m *StandardRWMutex) RLock()               { m.mu.RLock() }
func (m *StandardRWMutex) RUnlock()             { m.mu.RUnlock() }
func (m *StandardRWMutex) TryLock() bool        { return m.mu.TryLock() }
func (m *StandardRWMutex) TryRLock() bool       { return m.mu.TryRLock() }
func (m *StandardRWMutex) RLocker() sync.Locker { return m.mu.RLocker() }

var (
	_ MutexImpl   = (*Mutex)(nil)
	_ RWMutexImpl = (*RWMutex)(nil)
	_ MutexImpl   = (*StandardMutex)(nil)
	_ RWMutexImpl = (*StandardRWMutex)(nil)
)
