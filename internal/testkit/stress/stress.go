package stress

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locksmith-go/locksmith/detect"
)

// Config says how much Run does. The zero value is valid: one short
// burst of DefaultRounds rounds with detection off.
type Config struct {
	// Mode is the detection mode in force while Run runs. Run installs it
	// with detect.Configure, together with a reporter that counts reports
	// as anomalies, and restores the previous configuration when it
	// returns; so Run must not overlap other code that configures
	// package detect. The zero value is detect.Off.
	Mode detect.Mode

	// SwitchModes, if set, adds a goroutine to each round that keeps
	// switching the detector between Off, Cycles and Order with
	// detect.Configure (each switch restored after a moment, which puts
	// Mode back) while the workers hold and wait for locks: locks taken in
	// one mode are released in another, goroutines parked in Off mode are
	// woken in Cycles mode, and so on. Every invariant Run checks still
	// holds, and once a round's goroutines have exited, detect.Dump (in
	// Order mode) must list no blocked goroutine and no held lock.
	SwitchModes bool

	// Duration is how long to keep starting rounds. Run always completes
	// at least Rounds rounds, then starts new ones until Duration has
	// passed since it began or ctx is done.
	Duration time.Duration

	// Rounds is the least number of rounds; 0 means DefaultRounds. The
	// detector's memory is compared between the second round and the
	// last, so it is checked only from 3 rounds on.
	Rounds int

	// Goroutines is the number of goroutines per workload in a round
	// (there are twelve workloads, most with a goroutine or two more to
	// signal or produce); 0 means DefaultGoroutines.
	Goroutines int

	// Ops is the number of operations each goroutine does in a round;
	// 0 means DefaultOps.
	Ops int

	// Seed seeds the random choice of operations and timeouts.
	Seed uint64

	// Bubble, if set, runs body in a new testing/synctest bubble and
	// returns when it has finished; a test passes
	//
	//	func(body func()) {
	//		t.Run("bubble", func(t *testing.T) {
	//			synctest.Test(t, func(*testing.T) { body() })
	//		})
	//	}
	//
	// Each round then also runs a workload that shares its locks and Cond
	// between goroutines outside any bubble and those of two bubbles. (A
	// bubble can only be made with a *testing.T: testing/synctest has no
	// other entry point; lockbench -soak makes one outside go test.)
	Bubble func(body func())

	// Strand, if set, runs body in a new testing/synctest bubble on the
	// calling goroutine and returns what synctest.Test panicked with (nil
	// if it returned); a test passes
	//
	//	func(body func()) (v any) {
	//		defer func() { v = recover() }()
	//		synctest.Test(t, func(*testing.T) { body() })
	//		return nil
	//	}
	//
	// Each round then also strands readers, on an RWMutex and on an
	// RWMonitor: a goroutine holds the write lock while it calls Strand,
	// so that it counts as one of the bubble's goroutines, and the
	// bubble's goroutines read-lock it and deadlock on purpose; Test
	// reports it (and fails t), and the holder's Unlock, which cannot wake
	// them, must panic with ErrStranded and leave the lock to the readers
	// and writers outside that queued meanwhile and that go on using it.
	// The stranded goroutines stay blocked for good: run it in a process
	// of its own (lockbench -soak's last phase, or a child process of a
	// test). Their wait-timeout reports, true ones, are counted in
	// Result.StrandedReports, not as anomalies.
	Strand func(body func()) any
}

// Defaults for the zero fields of Config.
const (
	DefaultRounds     = 3
	DefaultGoroutines = 4
	DefaultOps        = 200
)

// Primitive names, the keys of Result.Ops.
const (
	PrimMutex       = "mutex.Mutex"
	PrimMonitor     = "monitor.Monitor"
	PrimCondSync    = "condvar.Cond(*sync.Mutex)"
	PrimCondMutex   = "condvar.Cond(*mutex.Mutex)"
	PrimCondMonitor = "condvar.Cond(*monitor.Monitor)"
	PrimRWMutex     = "mutex.RWMutex"
	PrimRWMonitor   = "monitor.RWMonitor"
)

// Primitives lists the keys of Result.Ops in the order String prints them.
var Primitives = []string{PrimMutex, PrimMonitor, PrimCondSync, PrimCondMutex, PrimCondMonitor, PrimRWMutex, PrimRWMonitor}

func allPrimitives() []string { return Primitives }

// Result is what Run did and found.
type Result struct {
	Mode   detect.Mode
	Rounds int

	// ModeSwitches counts the detection modes installed by the switcher
	// of Config.SwitchModes (0 without it).
	ModeSwitches int64

	Elapsed time.Duration

	// Ops counts calls into each primitive's API (locks, unlocks, tries,
	// waits, signals, misuse probes), by primitive name (see Primitives).
	Ops map[string]int64

	// Signals and Wakeups count, in the exact-signal workloads, the
	// Signals made while a waiter was certainly queued and the waits they
	// ended; Run checks that they are equal.
	Signals, Wakeups int64

	// Reports is the number of detector reports; every one is also an
	// anomaly, since the workloads take locks in one consistent order and
	// never deadlock, but for StrandedReports.
	Reports int

	// Stranded counts the goroutines left blocked for good by the
	// stranding workload (Config.Strand), and StrandedReports the
	// wait-timeout reports about them.
	Stranded, StrandedReports int

	// HeapAfterRound is the live heap (runtime.MemStats.HeapAlloc after
	// a garbage collection) at the end of each round.
	HeapAfterRound []uint64

	// Anomalies describes every broken invariant found, at most
	// MaxAnomalies of them; DroppedAnomalies counts the rest.
	Anomalies        []string
	DroppedAnomalies int
}

// MaxAnomalies bounds Result.Anomalies.
const MaxAnomalies = 100

// OK reports whether Run found nothing wrong.
func (r *Result) OK() bool { return len(r.Anomalies) == 0 && r.DroppedAnomalies == 0 }

// TotalOps returns the sum of Ops.
func (r *Result) TotalOps() int64 {
	var n int64
	for _, v := range r.Ops {
		n += v
	}
	return n
}

// String formats r as a small report: operations per primitive, the
// exact-signal count, the heap across rounds and the anomalies.
func (r *Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stress: mode %v, %d rounds in %v\n", r.Mode, r.Rounds, r.Elapsed.Round(time.Millisecond))
	if r.ModeSwitches > 0 {
		fmt.Fprintf(&b, "  switched between off, cycles and order %d times while locks were held\n", r.ModeSwitches)
	}
	secs := r.Elapsed.Seconds()
	for _, p := range allPrimitives() {
		n := r.Ops[p]
		rate := 0.0
		if secs > 0 {
			rate = float64(n) / secs
		}
		fmt.Fprintf(&b, "  %-32s %12d ops %12.0f ops/s\n", p, n, rate)
	}
	fmt.Fprintf(&b, "  signals to queued waiters %d, wakeups %d\n", r.Signals, r.Wakeups)
	if n := len(r.HeapAfterRound); n > 0 {
		// Rounds 1, 2, and every quarter of the run.
		b.WriteString("  live heap after round")
		last := 0
		for _, round := range []int{1, 2, n / 4, n / 2, 3 * n / 4, n} {
			if round > last && round <= n {
				fmt.Fprintf(&b, " %d: %s;", round, mib(r.HeapAfterRound[round-1]))
				last = round
			}
		}
		b.WriteString("\n")
	}
	if r.Stranded > 0 {
		fmt.Fprintf(&b, "  readers stranded in deadlocked bubbles %d, wait-timeout reports about them %d\n", r.Stranded, r.StrandedReports)
	}
	fmt.Fprintf(&b, "  detector reports: %d\n", r.Reports)
	fmt.Fprintf(&b, "  anomalies: %d\n", len(r.Anomalies)+r.DroppedAnomalies)
	for _, a := range r.Anomalies {
		fmt.Fprintf(&b, "    - %s\n", strings.ReplaceAll(a, "\n", "\n      "))
	}
	if r.DroppedAnomalies > 0 {
		fmt.Fprintf(&b, "    (and %d more)\n", r.DroppedAnomalies)
	}
	return b.String()
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// liveness bounds every wait for something that must happen: a signal
// reaching a waiter, a round's goroutines finishing. Nothing is timed
// against it; it turns a hang into an anomaly.
const liveness = 30 * time.Second

// roundTimeout bounds a round. A round that overruns it is reported with
// every goroutine's stack, and Run returns without waiting for its
// goroutines (they are stuck on a lock for good).
const roundTimeout = 2 * time.Minute

// Run runs the stress mix under cfg until cfg.Duration has passed (at
// least cfg.Rounds rounds) or ctx is done, and returns what it did and the
// anomalies it found. It returns an error only for an invalid cfg: broken
// invariants are anomalies in the Result.
//
// Invariants checked, each an anomaly when broken:
//
//   - mutual exclusion: a plain counter per lock, incremented only under
//     the lock, equals an atomic count of the increments at the end of the
//     round, and an atomic occupancy count never sees two holders (the
//     race detector, under -race, also sees the plain counter); a
//     read-write lock's readers never see a writer inside, nor a writer
//     another writer or a reader;
//   - ownership: after a successful Lock, TryLock or LockContext the
//     caller holds the lock (Owned, HoldCount); after a LockContext or a
//     WaitContext that returned an error, or a TryLock that returned
//     false, it does not (or, for a Cond wait, holds it exactly as before);
//     every lock is free when the round ends, so a grant that reached a
//     goroutine that had given up was passed on;
//   - misuse: Unlock by a non-owner and recursive Lock of a Mutex panic
//     with the documented sentinel and change nothing; a panic inside
//     Monitor.Do or under a deferred Unlock releases what it took;
//   - read-write misuse: a recursive RLock or an upgrade of an RWMutex
//     panics with ErrRecursiveLock, an RWMonitor's upgrade with ErrUpgrade,
//     an RUnlock without a read hold with ErrNotOwner, each keeping the
//     holds as they were; an RWMonitor's write and read hold counts follow
//     every re-entry, inner read lock and downgrade;
//   - hold counts: every Monitor re-entry adds one hold, every wait (also
//     one that times out or is cancelled) restores the count it found;
//   - no lost or spurious wakeup, exactly: in the exact-signal workloads a
//     signaller waits for each Signal to wake exactly one waiter, while
//     other waiters' timeouts and cancellations race it; a Signal that
//     wakes nobody within the liveness bound, or a wakeup with no Signal,
//     is an anomaly, and the counts must match at the end;
//   - no lost wakeup under Broadcast and predicate waits: whenever a
//     goroutine holds the lock of a token queue, if any waiter is still
//     queued on the Cond, every token is matched by a waiter already woken
//     (tokens <= waiters inside Wait - waiters queued);
//   - read-only cycles: sorts whose comparator read-locks both items nest
//     every pair of a round's RWMutexes both ways, with nothing ever
//     write-locked: no deadlock, so no report in Order mode either, and
//     every sort comes out ordered;
//   - stranded readers (Config.Strand): the Unlock of a writer that held
//     the lock while its bubble's readers deadlocked behind it panics
//     with ErrStranded, and the lock goes on for the goroutines outside;
//   - the detector: no report at all (the workloads take locks in one
//     consistent order), and its memory flat: the live heap after the last
//     round is at most twice that after the second, plus 16 MiB;
//   - with Config.SwitchModes, the detector's records: once a round's
//     goroutines have exited, detect.Dump in Order mode lists no blocked
//     goroutine and no held lock, and detect.WriteDOT succeeds;
//   - liveness: every round ends within a generous bound; every goroutine
//     Run starts has exited when it returns (unless a round hung, which is
//     an anomaly).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.normalize(); err != nil {
		return Result{}, err
	}
	res := Result{Mode: cfg.Mode, Ops: map[string]int64{}}
	var an anomalies
	var reports, strandedReports atomic.Int64
	var stranded strandedSet
	defer detect.Configure(detect.WithMode(cfg.Mode), detect.WithReporter(func(r *detect.Report) {
		if r.Kind == detect.WaitTimeout && stranded.has(r.Steps[0].Goroutine) {
			strandedReports.Add(1)
			return
		}
		reports.Add(1)
		an.addf("detector report (%v):\n%s", r.Kind, r)
	}))()

	start := time.Now()
	for round := 0; ; round++ {
		if round >= cfg.Rounds && (ctx.Err() != nil || time.Since(start) >= cfg.Duration) {
			break
		}
		rd := newRound(cfg, round, &an)
		rd.stranded = &stranded
		if !rd.run() {
			res.Rounds = round + 1
			break // goroutines are stuck: stop here
		}
		rd.addTo(&res)
		res.Rounds = round + 1
		res.HeapAfterRound = append(res.HeapAfterRound, liveHeap())
	}
	res.Elapsed = time.Since(start)
	if h := res.HeapAfterRound; len(h) >= 3 {
		if base, last := h[1], h[len(h)-1]; last > 2*base+16<<20 {
			an.addf("memory: live heap grew from %s after round 2 to %s after round %d", mib(base), mib(last), len(h))
		}
	}
	if res.Signals != res.Wakeups {
		an.addf("exact signals: %d signals to queued waiters, %d wakeups", res.Signals, res.Wakeups)
	}
	res.Reports = int(reports.Load())
	res.Stranded, res.StrandedReports = stranded.len(), int(strandedReports.Load())
	res.Anomalies, res.DroppedAnomalies = an.list()
	return res, nil
}

func (c *Config) normalize() error {
	switch {
	case c.Mode < detect.Off || c.Mode > detect.Order:
		return fmt.Errorf("stress: invalid mode %v", c.Mode)
	case c.Duration < 0, c.Rounds < 0, c.Goroutines < 0, c.Ops < 0:
		return errors.New("stress: negative Duration, Rounds, Goroutines or Ops")
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.Goroutines == 0 {
		c.Goroutines = DefaultGoroutines
	}
	if c.Ops == 0 {
		c.Ops = DefaultOps
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return nil
}

// liveHeap returns HeapAlloc after a collection. Locks dropped by a round
// are collected by the first GC; the detector's cleanups for them run on
// the runtime's cleanup goroutine after it, and what they free goes with
// the second.
func liveHeap() uint64 {
	runtime.GC()
	runtime.Gosched()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// anomalies collects anomaly descriptions from many goroutines.
type anomalies struct {
	mu      sync.Mutex
	items   []string
	dropped int
}

func (a *anomalies) addf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.items) >= MaxAnomalies {
		a.dropped++
		return
	}
	a.items = append(a.items, s)
}

func (a *anomalies) list() ([]string, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.items), a.dropped
}
