package detectdiff_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sasha-s/go-deadlock"
	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testutil"
	"github.com/locksmith-go/locksmith/internal/testutil/detecttest"
)

// A scenario written once runs on every library through a kit: the
// library's lock types behind rwLock and tryLocker, and how its reports
// are configured and counted. Calls go through interfaces; these are
// correctness tests, not benchmarks.
//
// Three kits: goDeadlockKit (deadlock.RWMutex and deadlock.Mutex, the
// originals), locksmithRWKit (mutex.RWMutex, monitor.RWMonitor and
// mutex.Mutex) and locksmithExclusiveKit, the exclusive-lock ports of
// differential_test.go, where go-deadlock's RWMutex becomes a Mutex or a
// Monitor whose read locks are Lock (see exclusive).

// tryLocker is what the scenarios need of a plain mutex.
type tryLocker interface {
	sync.Locker
	TryLock() bool
}

// kit is one library's side of the scenarios.
type kit struct {
	// configure sets detection up for one scenario: the wait timeout (0
	// for none) and, where the library can turn it off, lock-order
	// checking. Locksmith's side always runs in Order mode, which checks
	// both.
	configure func(t *testing.T, wait time.Duration, order bool) reports
	// rw returns a read-write lock of the kind "rwmutex" or "rwmonitor"
	// (go-deadlock has one kind), named for reports.
	rw func(kind, name string) rwLock
	// mutex returns a plain mutex, named for reports.
	mutex func(name string) tryLocker
}

// reports counts one scenario's reports.
type reports interface {
	count() int
	// onlyKind checks that every report is of kind k; go-deadlock's
	// reports have no kind.
	onlyKind(t *testing.T, k detect.Kind)
}

func (h *gdHarness) onlyKind(*testing.T, detect.Kind) {}

type lsReports struct{ rec *detecttest.Recorder }

func (r lsReports) count() int { return len(r.rec.All()) }

func (r lsReports) onlyKind(t *testing.T, k detect.Kind) {
	t.Helper()
	assert.Len(t, r.rec.All(k), len(r.rec.All()), "%s", r.rec)
}

var goDeadlockKit = kit{
	configure: func(t *testing.T, wait time.Duration, order bool) reports {
		return useGoDeadlock(t, wait, order)
	},
	rw:    func(string, string) rwLock { return new(deadlock.RWMutex) },
	mutex: func(string) tryLocker { return new(deadlock.Mutex) },
}

var locksmithRWKit = kit{
	configure: lsKitConfigure,
	rw:        namedRW,
	mutex:     func(name string) tryLocker { return detecttest.Named("mutex", name).(tryLocker) },
}

var locksmithExclusiveKit = kit{
	configure: lsKitConfigure,
	rw: func(kind, name string) rwLock {
		switch kind {
		case "rwmutex":
			return exclusive{detecttest.Named("mutex", name).(tryLocker)}
		case "rwmonitor":
			return exclusive{detecttest.Named("monitor", name).(tryLocker)}
		}
		panic(kind)
	},
	mutex: locksmithRWKit.mutex,
}

func lsKitConfigure(t *testing.T, wait time.Duration, _ bool) reports {
	return lsReports{lsConfigure(t, wait)}
}

// exclusive is a Mutex (for "rwmutex") or a Monitor (for "rwmonitor") in
// the exclusive-lock ports: its read locks are Lock.
type exclusive struct{ tryLocker }

func (e exclusive) RLock()         { e.Lock() }
func (e exclusive) RUnlock()       { e.Unlock() }
func (e exclusive) TryRLock() bool { return e.TryLock() }

// --- scenarios ---------------------------------------------------------

func noDeadlocks(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 5*time.Second, true)
		a, b, c := k.rw("rwmonitor", "a"), k.mutex("b"), k.rw("rwmutex", "c")
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					a.Lock()
					b.Lock()
					c.RLock()
					runtime.Gosched()
					c.RUnlock()
					b.Unlock()
					a.Unlock()
				}
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					a.RLock()
					b.Lock()
					c.Lock()
					runtime.Gosched()
					c.Unlock()
					b.Unlock()
					a.RUnlock()
				}
			}()
		}
		wg.Wait()
		return rep.count()
	}
}

func tryLockNoDeadlocks(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 5*time.Second, true)
		a, b, c := k.rw("rwmonitor", "a"), k.mutex("b"), k.rw("rwmutex", "c")
		var wg sync.WaitGroup
		for range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					if a.TryLock() {
						if b.TryLock() {
							if c.TryRLock() {
								runtime.Gosched()
								c.RUnlock()
							}
							b.Unlock()
						}
						a.Unlock()
					}
				}
			}()
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					if a.TryRLock() {
						if b.TryLock() {
							if c.TryLock() {
								runtime.Gosched()
								c.Unlock()
							}
							b.Unlock()
						}
						a.RUnlock()
					}
				}
			}()
		}
		wg.Wait()
		return rep.count()
	}
}

func manyReaders(k kit) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 5*time.Second, true)
		mu := k.rw("rwmonitor", "mu")
		var wg sync.WaitGroup
		for range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					mu.RLock()
					runtime.Gosched()
					mu.RUnlock()
				}
			}()
		}
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 10 {
					mu.Lock()
					runtime.Gosched()
					mu.Unlock()
					runtime.Gosched()
				}
			}()
		}
		wg.Wait()
		return rep.count()
	}
}

// lockOrder: W(a) then b; b then R(a). kindA is a's kind on locksmith's
// side.
func lockOrder(k kit, kindA string) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw(kindA, "a"), k.mutex("b")
		testutil.OnOtherOK(t, func() { lockPair(a, b) })
		testutil.OnOtherOK(t, func() {
			b.Lock()
			a.RLock()
			a.RUnlock()
			b.Unlock()
		})
		rep.onlyKind(t, detect.LockOrder)
		return rep.count()
	}
}

// tryLockOrder: TryLock(a) then TryLock(b); b then R(a). kindA is a's
// kind on locksmith's side.
func tryLockOrder(k kit, kindA string) func(t *testing.T) int {
	return func(t *testing.T) int {
		rep := k.configure(t, 0, true)
		a, b := k.rw(kindA, "a"), k.mutex("b")
		testutil.OnOtherOK(t, func() {
			if a.TryLock() {
				if b.TryLock() {
					b.Unlock()
				}
				a.Unlock()
			}
		})
		testutil.OnOtherOK(t, func() {
			b.Lock()
			a.RLock()
			a.RUnlock()
			b.Unlock()
		})
		return rep.count()
	}
}
