//go:build unix && go1.24

package detect_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/cputime"
	"github.com/locksmith-go/locksmith/mutex"
)

func newSync() sync.Locker  { return new(sync.Mutex) }
func newMutex() sync.Locker { return new(mutex.Mutex) }

// Order mode at scale: what lock-order validation costs when many locks
// are held at once, when the graph grows large, when lock instances are
// nested for the first time (objects that carry their own locks), and
// with many short-lived goroutines. Regenerate with
//
//	go test -run '^$' -bench 'Order' -count 3 ./detect/
//
// and, for the short-lived goroutines under the race detector (the whole
// operation, and the goroutine's body alone),
//
//	go test -race -run '^$' -bench 'OrderShortLivedGoroutine' -count 5 ./detect/

// heapInUse returns the heap in use after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// settle collects until the detector has forgotten every lock that has
// been dropped (the previous round's), so that a round's counts are its
// own: the scan that forgets collected locks runs after the collection
// that finds them unreachable.
func settle() {
	last, same := -1, 0
	for range 100 {
		runtime.GC()
		runtime.Gosched()
		n := detect.ReadStats().Nodes
		if n == last {
			if same++; same == 3 {
				return
			}
		} else {
			last, same = n, 0
		}
	}
}

// newMutexes returns n Mutexes allocated one by one, as objects that carry
// their own lock are. (Locks in one large array all live in one span of
// the heap, where the runtime keeps the weak pointers and cleanups that
// detection metadata needs in one sorted list: adding them costs time
// linear in the array's length, per lock.)
func newMutexes(n int) []*mutex.Mutex {
	locks := make([]*mutex.Mutex, n)
	for i := range locks {
		locks[i] = new(mutex.Mutex)
	}
	return locks
}

// BenchmarkOrderManyHeld locks 2,000 fresh Mutexes in one order and
// unlocks them: held locks each order edge costs, and the heap the
// detector keeps while the locks live.
func BenchmarkOrderManyHeld(b *testing.B) {
	const n = 2000
	restore := detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))
	defer restore()
	var edges, heap float64
	for b.Loop() {
		b.StopTimer()
		settle()
		locks := newMutexes(n)
		before := heapInUse()
		base := detect.ReadStats().Edges
		b.StartTimer()
		for i := range locks {
			locks[i].Lock()
		}
		for i := range locks {
			locks[n-1-i].Unlock()
		}
		b.StopTimer()
		edges += float64(detect.ReadStats().Edges - base)
		heap += float64(int64(heapInUse())-int64(before)) / (1 << 20)
		runtime.KeepAlive(locks)
		b.StartTimer()
	}
	b.ReportMetric(edges/float64(b.N), "edges/op")
	b.ReportMetric(heap/float64(b.N), "heap-MiB/op")
}

// BenchmarkOrderTransfers is a bank of 10,000 accounts, each with its own
// Mutex, and 200,000 transfers between random pairs, each locking the
// lower account ID first (deadlock-free). It reports the cost per transfer
// over the first and the last tenth of the run (the graph keeps growing:
// nearly every transfer nests a pair never nested before), their ratio,
// in wall time and in the process's CPU time (steadier on a shared
// machine), the order edges the run leaves, the heap the detector keeps
// for them (bytes per edge) and the locks each search for an edge against
// the order visited.
func BenchmarkOrderTransfers(b *testing.B) {
	const accounts = 10_000
	for _, transfers := range []int{200_000} {
		b.Run(fmt.Sprintf("transfers=%d", transfers), func(b *testing.B) {
			restore := detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))
			defer restore()
			tenth := transfers / 10
			var first, last, firstCPU, lastCPU, edges, perEdge, searches, visits float64
			for b.Loop() {
				b.StopTimer()
				settle()
				locks := newMutexes(accounts)
				balance := make([]int64, accounts)
				rng := rand.New(rand.NewPCG(1, 2))
				before := heapInUse()
				base0 := detect.ReadStats()
				base := base0.Edges
				b.StartTimer()
				t0, c0 := time.Now(), cputime.Total()
				for i := range transfers {
					x, y := rng.IntN(accounts), rng.IntN(accounts)
					if x == y {
						y = (y + 1) % accounts
					}
					lo, hi := min(x, y), max(x, y)
					locks[lo].Lock()
					locks[hi].Lock()
					balance[x]--
					balance[y]++
					locks[hi].Unlock()
					locks[lo].Unlock()
					switch i + 1 {
					case tenth:
						first += float64(time.Since(t0).Nanoseconds()) / float64(tenth)
						firstCPU += float64((cputime.Total() - c0).Nanoseconds()) / float64(tenth)
					case transfers - tenth:
						t0, c0 = time.Now(), cputime.Total()
					case transfers:
						last += float64(time.Since(t0).Nanoseconds()) / float64(tenth)
						lastCPU += float64((cputime.Total() - c0).Nanoseconds()) / float64(tenth)
					}
				}
				b.StopTimer()
				st := detect.ReadStats()
				e := st.Edges - base
				edges += float64(e)
				searches += float64(st.Searches - base0.Searches)
				visits += float64(st.Visited - base0.Visited)
				perEdge += float64(int64(heapInUse())-int64(before)) / float64(max(e, 1))
				runtime.KeepAlive(locks)
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(first/n, "first10%-ns/transfer")
			b.ReportMetric(last/n, "last10%-ns/transfer")
			b.ReportMetric(last/first, "last/first")
			b.ReportMetric(firstCPU/n, "first10%-cpu-ns/transfer")
			b.ReportMetric(lastCPU/n, "last10%-cpu-ns/transfer")
			b.ReportMetric(lastCPU/firstCPU, "cpu-last/first")
			b.ReportMetric(edges/n, "edges/op")
			b.ReportMetric(perEdge/n, "heap-B/edge")
			b.ReportMetric(searches/max(edges, 1), "searches/edge")
			b.ReportMetric(visits/max(searches, 1), "visited/search")
		})
	}
}

// BenchmarkOrderFirstNesting nests a pair of lock instances never
// nested before (new locks, so new graph nodes and a new edge), the
// pattern of code whose objects carry their own locks. The locks are
// allocated with the timer stopped: allocs/op counts the detector's
// allocations only. In Order mode a lock's first acquisition makes its
// metadata (a slot in a slab of 15 with its graph node, a fifteenth of
// an allocation, plus the weak pointer that lets it be collected: one
// allocation) and records where it was first locked; the locked-before
// case has each lock taken alone once beforehand, with the timer
// stopped, so that it measures the nesting alone: the new edge.
// cpu-ns/op is the process's CPU time while the timer runs (the
// collector's and the cleanups' included), steadier than ns/op on a
// shared machine. bench/detectcost runs the same nesting against
// go-deadlock.
//
// The weak-pointers-only case takes no lock: it makes a weak pointer to
// each of the two new locks, as the metadata of every lock that Order
// mode sees does, and measures what the runtime alone charges for that
// (the handle, the special record in the lock's span, the sweep that
// frees both when the lock dies, the marking of the handle at every
// collection): the floor of a first nesting for any detector that
// forgets each collected lock.
func BenchmarkOrderFirstNesting(b *testing.B) {
	type pair struct{ outer, inner sync.Locker }
	nest := func(p pair) {
		p.outer.Lock()
		p.inner.Lock()
		p.inner.Unlock()
		p.outer.Unlock()
	}
	cases := []struct {
		name  string
		setup func() func()
		pair  func() pair
		nest  func(pair) // nest by default
	}{
		{"mutex.Mutex/cycles", func() func() {
			return detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(0))
		}, func() pair { return pair{new(mutex.Mutex), new(mutex.Mutex)} }, nil},
		{"mutex.Mutex/order", func() func() {
			return detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))
		}, func() pair { return pair{new(mutex.Mutex), new(mutex.Mutex)} }, nil},
		{"mutex.Mutex/order/locked-before", func() func() {
			return detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))
		}, func() pair {
			p := pair{new(mutex.Mutex), new(mutex.Mutex)}
			p.outer.Lock() // metadata and first-lock site made here
			p.outer.Unlock()
			p.inner.Lock()
			p.inner.Unlock()
			return p
		}, nil},
		{"weak-pointers-only", func() func() {
			return detect.Configure(detect.WithMode(detect.Off), detect.WithWaitTimeout(0))
		}, func() pair { return pair{new(mutex.Mutex), new(mutex.Mutex)} }, func(p pair) {
			weakSink[0] = weak.Make(p.outer.(*mutex.Mutex))
			weakSink[1] = weak.Make(p.inner.(*mutex.Mutex))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			defer c.setup()()
			nest := nest
			if c.nest != nil {
				nest = c.nest
			}
			const batch = 1024
			pairs := make([]pair, batch)
			next := len(pairs)    // the next pair to nest
			var cpu time.Duration // while the timer runs
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Total()
			for i := 0; i < b.N; i++ {
				if next == len(pairs) {
					b.StopTimer()
					cpu += cputime.Total() - cpu0
					pairs = pairs[:min(batch, b.N-i)]
					for j := range pairs {
						pairs[j] = c.pair()
					}
					next = 0
					cpu0 = cputime.Total()
					b.StartTimer()
				}
				// In the order the locks were made, as code that makes
				// objects and then uses them does. The weak pointers' cost
				// depends on it: the runtime keeps a span's weak handles in
				// a list sorted by address, and looks for a new handle's
				// place from the lowest address up.
				p := pairs[next]
				pairs[next] = pair{}
				next++
				nest(p)
			}
			cpu += cputime.Total() - cpu0
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// weakSink keeps BenchmarkOrderFirstNesting's weak pointers from being
// optimised away.
var weakSink [2]weak.Pointer[mutex.Mutex]

// BenchmarkOrderShortLivedGoroutines is the shape of a test suite: each
// operation starts a goroutine that takes two long-lived locks nested
// (shared: known edges) and, in the own case, also locks a fresh lock of
// its own nested under them (a new lock and a new edge per goroutine),
// then exits. Run it under -race to compare with a test binary: Order
// mode against Cycles mode and sync.Mutex, in wall time and in the
// process's CPU time per operation (steadier on a shared machine).
func BenchmarkOrderShortLivedGoroutines(b *testing.B) {
	cases := []struct {
		name    string
		mode    detect.Mode
		newLock func() sync.Locker
	}{
		{"sync.Mutex", detect.Off, newSync},
		{"mutex.Mutex/off", detect.Off, newMutex},
		{"mutex.Mutex/cycles", detect.Cycles, newMutex},
		{"mutex.Mutex/order", detect.Order, newMutex},
	}
	for _, own := range []bool{false, true} {
		b.Run(map[bool]string{false: "shared", true: "own"}[own], func(b *testing.B) {
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					defer detect.Configure(detect.WithMode(c.mode), detect.WithWaitTimeout(0))()
					outer, inner := c.newLock(), c.newLock()
					b.ReportAllocs()
					cpu0 := cputime.Total()
					for b.Loop() {
						done := make(chan struct{})
						go func() {
							defer close(done)
							outer.Lock()
							inner.Lock()
							if own {
								l := c.newLock()
								l.Lock()
								l.Unlock()
							}
							inner.Unlock()
							outer.Unlock()
						}()
						<-done
					}
					b.ReportMetric(float64((cputime.Total()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// BenchmarkOrderShortLivedGoroutineBody is BenchmarkOrderShortLivedGoroutines
// timed from inside each goroutine: body-ns is the wall time from just
// before its first Lock to just after its last Unlock, without the
// goroutine's start and the wakeup of the goroutine waiting for it. Under
// -race the operation's CPU time has two levels: when the body outlasts
// the spinning of the idle processor's thread, which gives up after a
// few microseconds, the goroutine's close wakes that thread from its
// futex sleep, a step of CPU time more per operation. So a change in
// the detector's cost moves body-ns in proportion, and the operation's
// CPU time by a step when the body crosses that threshold.
func BenchmarkOrderShortLivedGoroutineBody(b *testing.B) {
	modes := []struct {
		name string
		mode detect.Mode
	}{{"off", detect.Off}, {"cycles", detect.Cycles}, {"order", detect.Order}}
	for _, own := range []bool{false, true} {
		b.Run(map[bool]string{false: "shared", true: "own"}[own], func(b *testing.B) {
			for _, c := range modes {
				b.Run(c.name, func(b *testing.B) {
					defer detect.Configure(detect.WithMode(c.mode), detect.WithWaitTimeout(0))()
					outer, inner := newMutex(), newMutex()
					var body time.Duration
					for i := 0; i < b.N; i++ {
						done := make(chan struct{})
						go func() {
							defer close(done)
							t0 := time.Now()
							outer.Lock()
							inner.Lock()
							if own {
								l := newMutex()
								l.Lock()
								l.Unlock()
							}
							inner.Unlock()
							outer.Unlock()
							body += time.Since(t0) // read after done
						}()
						<-done
					}
					b.ReportMetric(float64(body.Nanoseconds())/float64(b.N), "body-ns")
				})
			}
		})
	}
}

// BenchmarkOrderGoroutineRecord is what a short-lived goroutine pays for
// its Order-mode record, apart from its locks: bare starts a goroutine
// that does nothing and waits for it, record one that claims its record
// (a free slot of the table, or one left idle by a goroutine gone before)
// and leaves it idle, as a goroutine's first lock and last unlock do.
// sweep is one pass of the sweeper over the table, which runs once per
// collection while any record is claimed. Run it under -race too, where
// each atomic operation is a call into the race runtime.
func BenchmarkOrderGoroutineRecord(b *testing.B) {
	for _, c := range []struct {
		name string
		body func()
	}{{"bare", func() {}}, {"record", detect.EnterLeave}} {
		b.Run(c.name, func(b *testing.B) {
			defer detect.Configure(detect.WithMode(detect.Order), detect.WithWaitTimeout(0))()
			for i := 0; i < b.N; i++ {
				done := make(chan struct{})
				go func() {
					defer close(done)
					c.body()
				}()
				<-done
			}
		})
	}
	b.Run("sweep", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			detect.Sweep()
		}
	})
}
