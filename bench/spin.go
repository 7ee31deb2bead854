package bench

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// spinYield is how many failed attempts a spin lock makes before it yields
// its processor with runtime.Gosched. Goroutines are not threads: with more
// goroutines than Ps, a goroutine that never yields keeps a waiting holder
// off the CPU until the scheduler's 10 ms preemption tick, and an
// oversubscribed run would measure that tick rather than the lock. The
// value is a round number picked once, not tuned; both spin locks use it.
const spinYield = 32

// TASLock is a test-and-set spin lock, kept as a reference point, not for
// use. The zero value is an unlocked lock. It must not be copied after
// first use.
//
// Lock swaps 1 into the state word until it reads back 0. Every attempt is
// a write, so waiters keep pulling the cache line away from the holder,
// and a waiter never sleeps: it burns its core for as long as it waits,
// yielding the processor only every spinYield attempts.
//
// Jetty's lesson: Jetty once guarded hot paths with a spin lock on the
// theory that critical sections were too short to be worth parking for. In
// its JMH runs at 4 threads the spin lock managed 4.6M ops/s against
// ReentrantLock's 19.1M, about a quarter of the throughput, while keeping
// every core busy; a test-and-test-and-set variant (TTASLock) helped but
// not enough, and Jetty made a parking lock the default. The contended
// benchmarks here run this lock beside the parking ones, with CPU time per
// operation, so the same question can be asked of Go on any machine.
type TASLock struct {
	_     noCopy
	state atomic.Int32 // 1 while held
}

var _ sync.Locker = (*TASLock)(nil)

// Lock locks l, spinning until it is free.
func (l *TASLock) Lock() {
	for i := 1; l.state.Swap(1) != 0; i++ {
		if i%spinYield == 0 {
			runtime.Gosched()
		}
	}
}

// Unlock unlocks l. Like sync.Mutex, l is not tied to a goroutine; unlike
// it, unlocking an unlocked TASLock is not detected.
func (l *TASLock) Unlock() { l.state.Store(0) }

// TTASLock is a test-and-test-and-set spin lock, kept as a reference
// point, not for use. The zero value is an unlocked lock. It must not be
// copied after first use.
//
// A waiter reads the state word until it looks free and only then tries to
// take it, so while the lock is held waiters spin on their own cached copy
// instead of writing; they still burn a core each. This is the refinement
// Jetty tried after its test-and-set lock lost to ReentrantLock: it helped,
// but not enough, and Jetty went to a parking lock. See TASLock.
type TTASLock struct {
	_     noCopy
	state atomic.Int32 // 1 while held
}

var _ sync.Locker = (*TTASLock)(nil)

// Lock locks l, spinning until it is free.
func (l *TTASLock) Lock() {
	for i := 1; ; i++ {
		if l.state.Load() == 0 && l.state.CompareAndSwap(0, 1) {
			return
		}
		if i%spinYield == 0 {
			runtime.Gosched()
		}
	}
}

// Unlock unlocks l. It is not tied to a goroutine, and unlocking an
// unlocked TTASLock is not detected.
func (l *TTASLock) Unlock() { l.state.Store(0) }

// ChanLock is the lock Go programmers reach for without package sync: a
// channel with a buffer of one, full while the lock is held. It parks
// waiters in the runtime's channel queue. It must be made with
// NewChanLock: the zero value's nil channel blocks forever.
type ChanLock struct {
	ch chan struct{}
}

var _ sync.Locker = (*ChanLock)(nil)

// NewChanLock returns an unlocked ChanLock.
func NewChanLock() *ChanLock { return &ChanLock{ch: make(chan struct{}, 1)} }

// Lock locks l, parking until it is free.
func (l *ChanLock) Lock() { l.ch <- struct{}{} }

// Unlock unlocks l. Unlocking an unlocked ChanLock blocks forever.
func (l *ChanLock) Unlock() { <-l.ch }

// noCopy lets go vet's copylocks check report copies.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
