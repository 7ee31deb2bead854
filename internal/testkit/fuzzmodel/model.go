// Package fuzzmodel holds the model-based fuzz drivers of the locks: Run
// for a lock with, optionally, a condition (FuzzMutex, FuzzMonitor,
// FuzzCondSyncMutex, FuzzCondMutex, FuzzCondMonitor), and RWFuzz for the
// read-write locks (FuzzRWMutex, FuzzRWMonitor). Each package's Fuzz
// function only describes its lock as a Subject (or RWFuzzLock) and hands
// the input to the driver.
//
// Run's model. An input is a detection mode (first byte) and then one
// operation per byte, each addressed to one of three worker goroutines
// (see Subject.Ops for the encoding). The driver runs the workers one step
// at a time through channels: it tells a worker to run an operation and
// then waits until the reference model's prediction is observed, which is
// always one of two things: the operation returned (its result is
// checked), or the worker is parked (on the lock's queue, seen with
// Instance.QueueLen or, for a lock that shows no queue, in the goroutine's
// stack; or on the condition, seen with Cond.Waiters). Nothing is timed:
// between steps every worker is idle or parked, so each step has exactly
// one correct outcome, except the order in which the waiters woken by one
// Broadcast queue on the lock, which the model leaves open (any of them may
// be first).
//
// After each step the model is compared with what the lock reports (held,
// queue length, condition waiters) and with what each idle worker sees
// (Owned, HoldCount): a wait restores the hold count it found. Misuse
// (Unlock, Wait or a strict Signal by a goroutine that does not hold the
// lock, recursive Lock of a non-reentrant lock) must panic with exactly the
// documented error and change nothing. A panic under a deferred Unlock or
// inside Do must leave the lock as it was. Waits with a timeout use a
// timeout that never expires in a test (an hour) or zero; timeouts racing
// signals are the stress tests' business (internal/testkit/stress). At the end
// the driver cancels, signals and unlocks until every worker is idle and
// the lock free, then stops the workers and waits for them to exit.
//
// Go 1.26's fuzzing coordinator may end a run bounded by time with a
// spurious "context deadline exceeded" and no failing input (a known race,
// golang/go#75804, fixed in Go 1.27); bounding it by a count, such as
// -fuzztime 200000x, avoids that.
package fuzzmodel

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

const (
	// Workers is the number of workers an input addresses.
	Workers = 3
	maxOps  = 256       // operations per input; the rest is ignored
	long    = time.Hour // a WaitTimeout that never expires in a test
)

// Op is one operation of an input.
type Op uint8

const (
	Lock      Op = iota // Lock
	TryLock             // TryLock
	LockCtx             // LockContext with a context the driver cancels with Cancel (Lock without LockContext)
	LockDone            // LockContext with a context already done (skipped without LockContext)
	Unlock              // Unlock
	Cancel              // cancel the worker's pending LockContext or WaitContext
	Wait                // Wait
	WaitLong            // WaitTimeout(an hour)
	WaitZero            // WaitTimeout(0)
	WaitCtx             // WaitContext with a context the driver cancels with Cancel
	WaitDone            // WaitContext with a context already done
	Signal              // Signal (Monitor's Notify)
	Broadcast           // Broadcast (Monitor's NotifyAll)
	DoPanic             // Do(func() { panic(...) })
	LockPanic           // Lock, defer Unlock, panic
	numOps
)

var opNames = [numOps]string{
	"Lock", "TryLock", "LockCtx", "LockDone", "Unlock", "Cancel",
	"Wait", "WaitLong", "WaitZero", "WaitCtx", "WaitDone", "Signal", "Broadcast", "DoPanic", "LockPanic",
}

func (o Op) String() string { return opNames[o] }

// LockOps are the operations of a lock; CondOps add those of a condition.
// A Subject's Ops start with one of them, so that inputs of every target
// share the meaning of their first bytes.
var (
	LockOps = []Op{Lock, TryLock, LockCtx, LockDone, Unlock, Cancel}
	CondOps = []Op{Lock, TryLock, LockCtx, LockDone, Unlock, Cancel, Wait, WaitLong, WaitZero, WaitCtx, WaitDone, Signal, Broadcast}
)

// Step is one operation of an input: Op by worker W.
type Step struct {
	Op Op
	W  int
}

// S returns Step{op, w}, for seed tables.
func S(op Op, w int) Step { return Step{op, w} }

// A Subject is a lock (and optionally a condition) that Run fuzzes: its
// rules, the operations its inputs encode and how to make one.
type Subject struct {
	Name string // in failure messages
	// Ops is the encoding of an input's bytes after the first: byte b is
	// Ops[b % len(Ops)] by worker (b / len(Ops)) % Workers.
	Ops []Op
	// Recursive is the sentinel of a recursive Lock, nil for a reentrant
	// lock or one that cannot tell (a *sync.Mutex, whose recursive Lock
	// the driver skips). NotOwner is the sentinel of Unlock by a
	// non-owner, nil for a lock that cannot tell (whose misuse the driver
	// skips). Pkg prefixes their messages ("mutex", "monitor").
	Recursive, NotOwner error
	Reentrant           bool
	Pkg                 string
	// WaitMisuse returns the message and sentinel of a wait by goroutine
	// g that does not hold the lock (held by goroutine holder, or 0); nil
	// when such a wait cannot be made safely (on a *sync.Mutex it unlocks
	// an unlocked mutex, a fatal error). SignalMisuse is the same for
	// Signal and Broadcast, nil when they work without the lock, as
	// sync.Cond's do.
	WaitMisuse, SignalMisuse func(g, holder int64) (msg string, sentinel error)
	New                      func() Instance
}

// An Instance is one fresh lock of a Subject.
type Instance struct {
	// Lock is the lock. Besides sync.Locker it must have TryLock, and the
	// driver uses LockContext, Owned, Locked and HoldCount if it has them.
	// An owner-aware lock (Subject.NotOwner != nil) must have Owned and
	// Locked.
	Lock sync.Locker
	// QueueLen returns the number of goroutines parked in Lock's queue.
	// Nil for a lock that shows no queue: the driver then counts workers
	// whose stack shows the wait reason ParkedIn, and sees whether the
	// lock is free with TryLock once the rest matches the model.
	QueueLen func() int
	ParkedIn string
	Cond     Cond         // nil for a lock without a condition
	Do       func(func()) // for DoPanic: runs f holding the lock
	// Prepare, if set, runs on a worker before the input's first
	// operation (and must leave the lock free).
	Prepare func()
}

// Cond is a condition bound to an Instance's lock.
type Cond interface {
	Wait()
	WaitTimeout(time.Duration) bool
	WaitContext(context.Context) error
	Signal()
	Broadcast()
	Waiters() int // goroutines waiting, not yet signalled
}

type (
	tryLocker interface{ TryLock() bool }
	ctxLocker interface {
		LockContext(context.Context) error
	}
	ownerLocker interface {
		Owned() bool
		Locked() bool
	}
	holdCounter interface{ HoldCount() int }
)

// Encode returns the input that runs steps in detection mode mode, with
// ops as the encoding (a Subject's Ops).
func Encode(ops []Op, mode detect.Mode, steps ...Step) []byte {
	out := []byte{byte(mode)}
	for _, s := range steps {
		i := slices.Index(ops, s.Op)
		if i < 0 {
			panic(fmt.Sprintf("fuzzmodel: %v is not in the encoding %v", s.Op, ops))
		}
		out = append(out, byte(i)+byte(len(ops))*byte(s.W))
	}
	return out
}

func decode(ops []Op, b byte) Step {
	n := byte(len(ops))
	return Step{Op: ops[b%n], W: int(b/n) % Workers}
}

// CondSeeds returns the seed corpus of a lock with a condition, encoded
// with ops (a Subject's Ops, which must hold CondOps): named inputs that
// each exercise one rule. They are the same for every lock; where a rule
// does not apply to one (re-entry on a Mutex), the seed checks what
// happens instead (the recursive-lock panic).
func CondSeeds(ops []Op) map[string][]byte {
	enc := func(mode detect.Mode, steps ...Step) []byte { return Encode(ops, mode, steps...) }
	return map[string][]byte{
		"signal_fifo": enc(detect.Cycles,
			S(Lock, 0), S(Wait, 0), S(Lock, 1), S(WaitLong, 1), S(Lock, 2),
			S(Signal, 2), S(Signal, 2), S(Signal, 2), S(Unlock, 2), S(Unlock, 0), S(Unlock, 1)),
		"broadcast_all": enc(detect.Order,
			S(Lock, 0), S(Wait, 0), S(Lock, 1), S(WaitCtx, 1), S(Lock, 2), S(WaitLong, 2),
			S(Lock, 0), S(Broadcast, 0), S(Unlock, 0), S(Unlock, 1), S(Unlock, 2), S(Unlock, 0)),
		"cancel_wait_lock_held": enc(detect.Cycles,
			S(Lock, 0), S(WaitCtx, 0), S(Lock, 1), S(Cancel, 0), S(Signal, 1), S(Unlock, 1), S(Unlock, 0)),
		"cancel_wait_lock_free": enc(detect.Off,
			S(Lock, 0), S(WaitCtx, 0), S(Cancel, 0), S(Unlock, 0), S(Lock, 1), S(Unlock, 1)),
		"signal_then_cancel_too_late": enc(detect.Order,
			S(Lock, 0), S(WaitCtx, 0), S(Lock, 1), S(Signal, 1), S(Cancel, 0), S(Unlock, 1), S(Unlock, 0)),
		"wait_zero_and_done_ctx": enc(detect.Cycles,
			S(Lock, 0), S(WaitZero, 0), S(WaitDone, 0), S(Unlock, 0), S(LockDone, 1)),
		"misuse_without_lock": enc(detect.Off,
			S(Wait, 0), S(Signal, 1), S(Broadcast, 2), S(WaitLong, 0), S(WaitZero, 1), S(WaitDone, 2),
			S(Unlock, 0), S(Lock, 1), S(Unlock, 2), S(Signal, 0), S(Unlock, 1)),
		"queued_lockers_and_waiters": enc(detect.Cycles,
			S(Lock, 0), S(Lock, 1), S(LockCtx, 2), S(Wait, 0), S(Cancel, 2), S(Signal, 1),
			S(Lock, 2), S(Unlock, 1), S(WaitLong, 0), S(Signal, 2), S(Unlock, 2), S(Unlock, 0)),
		"reentrant_wait_restores_holds": enc(detect.Order,
			S(Lock, 0), S(Lock, 0), S(TryLock, 0), S(Wait, 0), S(Lock, 1), S(TryLock, 2),
			S(Signal, 1), S(Unlock, 1), S(Unlock, 0), S(Unlock, 0), S(Unlock, 0)),
		"all_wait_then_drain": enc(detect.Cycles,
			S(Lock, 0), S(Wait, 0), S(Lock, 1), S(WaitCtx, 1), S(Lock, 2), S(WaitLong, 2)),
		"lockctx_cancel_queue": enc(detect.Order,
			S(Lock, 0), S(LockCtx, 1), S(LockCtx, 2), S(Cancel, 1), S(Unlock, 0), S(Cancel, 2),
			S(Unlock, 2), S(TryLock, 1), S(Unlock, 1)),
		"broadcast_with_lockers_queued": enc(detect.Cycles,
			S(Lock, 0), S(Wait, 0), S(Lock, 1), S(Wait, 1), S(Lock, 2), S(Lock, 0),
			S(Broadcast, 2), S(Unlock, 2), S(Unlock, 0), S(Signal, 1), S(Unlock, 1)),
		"ping_pong": enc(detect.Off,
			S(Lock, 0), S(Wait, 0), S(Lock, 1), S(Signal, 1), S(Wait, 1), S(Signal, 0),
			S(Wait, 0), S(Signal, 1), S(WaitCtx, 1), S(Signal, 0), S(Unlock, 0), S(Unlock, 1)),
	}
}

// LockMisuse returns a lock's documented message for op ("unlock",
// "wait", "notify") by goroutine g that does not hold it, held by
// goroutine holder or free (holder 0); pkg names the lock ("monitor").
func LockMisuse(pkg, op string, g, holder int64) string {
	if holder == 0 {
		return fmt.Sprintf("%s: %s of unlocked %s (by goroutine %d)", pkg, op, pkg, g)
	}
	return fmt.Sprintf("%s: %s by goroutine %d of %s held by goroutine %d", pkg, op, g, pkg, holder)
}

var writeSeeds = flag.Bool("fuzzseeds.write", false, "rewrite the fuzz seed corpus under testdata/fuzz")

// CheckSeeds checks that the committed seed corpus of fuzz target target,
// testdata/fuzz/<target>/<seed name>, is seeds (rewriting it with
// -fuzzseeds.write); plain go test then runs every seed through the
// target. pkg is the package directory, for the hint in a failure.
func CheckSeeds(t *testing.T, pkg, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	hint := fmt.Sprintf("run go test ./%s -run %s -fuzzseeds.write", pkg, t.Name())
	for name, data := range seeds {
		path := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *writeSeeds {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "seed %s (%s to write it)", path, hint)
		require.Equal(t, want, string(got), "seed %s is stale (%s)", path, hint)
	}
}

// out is what a worker's operation did.
type out struct {
	w     int   // the worker
	v     any   // the recovered panic value, or nil
	err   error // LockContext, WaitContext
	ok    bool  // TryLock, WaitTimeout; Owned for a probe
	holds int   // HoldCount, for a probe
}

func (o out) String() string {
	return fmt.Sprintf("{worker %d: panic=%v err=%v ok=%v holds=%d}", o.w, o.v, o.err, o.ok, o.holds)
}

// state is where a worker is between steps.
type state int

const (
	idle   state = iota
	inLock       // parked in Lock or LockContext
	inCond       // parked on the condition
	relock       // out of the condition (signalled or cancelled), parked retaking the lock
)

type worker struct {
	cmd       chan func() out
	g         int64 // goroutine ID
	st        state
	op        Op                 // the operation it is parked in
	cancel    context.CancelFunc // of the pending LockContext or WaitContext
	cancelled bool
	holds     int  // the hold count its wait restores
	signalled bool // relock: it left the condition by a signal, not a cancellation
}

// finish marks w idle and releases its context.
func (w *worker) finish() {
	if w.cancel != nil {
		w.cancel()
	}
	*w = worker{cmd: w.cmd, g: w.g}
}

// driver runs one input: the workers, the lock and condition under test,
// and the model.
type driver struct {
	t      testing.TB
	s      Subject
	in     Instance
	l      sync.Locker
	c      Cond
	hasCtx bool
	w      []worker // Workers, and with a condition a janitor, used only to drain
	done   chan out
	exited sync.WaitGroup

	// The model.
	owner int     // the worker holding the lock, or -1
	holds int     // its hold count
	lockq [][]int // workers parked on the lock, in queue order; a group's order is open
	condq []int   // workers parked on the condition, in FIFO order

	pending map[int]func(out) // workers whose operation must return, with the check
	anyOf   []int             // one of these must take the lock next (lockq[0])

	reports atomic.Int32
	trace   []string
}

// errBoom is what DoPanic and LockPanic panic with.
var errBoom = errors.New("boom")

// Run runs one input against s.
func Run(t *testing.T, s Subject, data []byte) {
	if len(data) == 0 {
		return
	}
	in := s.New()
	d := &driver{t: t, s: s, in: in, l: in.Lock, c: in.Cond, owner: -1, pending: map[int]func(out){}}
	_, d.hasCtx = d.l.(ctxLocker)
	n := Workers
	if d.c != nil {
		n++
	}
	d.w = make([]worker, n)
	d.done = make(chan out, n)
	// Every wait below has the liveness deadline, but a send to a worker
	// stuck in the library has none: turn a hang into a crash, which the
	// fuzzer records with its input.
	defer time.AfterFunc(3*testutil.Liveness, func() { panic("fuzz input hung; goroutines:\n" + testutil.AllStacks()) }).Stop()
	mode := detect.Mode(data[0] % 3)
	d.trace = append(d.trace, "mode "+mode.String())
	// One lock: no deadlock and no lock-order inversion is possible, so
	// every report is a bug.
	defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0),
		detect.WithReporter(func(r *detect.Report) { d.reports.Add(1); t.Errorf("detector report:\n%s", r) }))()
	d.start()
	if in.Prepare != nil {
		d.run(0, func() out { in.Prepare(); return out{} }, d.expectOK(0))
		d.collect()
	}
	ops := data[1:]
	if len(ops) > maxOps {
		ops = ops[:maxOps]
	}
	for _, b := range ops {
		st := decode(s.Ops, b)
		if st.W = d.route(st); st.W >= 0 {
			d.step(st.Op, st.W)
		}
	}
	d.drain()
	d.stop()
	require.Zero(t, d.reports.Load(), "detector reports")
}

// String returns the steps run so far, for failure messages.
func (d *driver) String() string {
	return fmt.Sprintf("lock %s; steps so far:\n\t%s", d.s.Name, strings.Join(d.trace, "\n\t"))
}

func (d *driver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), d)
}

func (d *driver) start() {
	ids := make(chan int64)
	for k := range d.w {
		cmd := make(chan func() out)
		d.w[k] = worker{cmd: cmd}
		d.exited.Add(1)
		go func() {
			defer d.exited.Done()
			ids <- testutil.GoroutineID()
			for f := range cmd {
				o := call(f)
				o.w = k
				d.done <- o
			}
		}()
		d.w[k].g = <-ids
	}
}

func call(f func() out) (o out) {
	defer func() {
		if v := recover(); v != nil {
			o = out{v: v}
		}
	}()
	return f()
}

// stop ends the workers, which must all be idle, and waits for them to exit.
func (d *driver) stop() {
	for k := range d.w {
		close(d.w[k].cmd)
	}
	exited := make(chan struct{})
	go func() { d.exited.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(testutil.Liveness):
		d.fatalf("workers did not exit")
	}
}

// route returns the worker that runs s: s.W if it is idle (or s cancels),
// else the next idle worker, or -1 if all are parked.
func (d *driver) route(s Step) int {
	if s.Op == Cancel {
		return s.W
	}
	for i := range Workers {
		if k := (s.W + i) % Workers; d.w[k].st == idle {
			return k
		}
	}
	return -1
}

// step runs op on worker k and waits until the model's prediction is seen.
func (d *driver) step(op Op, k int) {
	d.trace = append(d.trace, fmt.Sprintf("worker %d (goroutine %d): %v", k, d.w[k].g, op))
	d.do(op, k)
	d.collect()
	d.settle()
	d.probe()
}

// run sends f to worker k and expects it to return, checked by check.
func (d *driver) run(k int, f func() out, check func(out)) {
	d.pending[k] = check
	d.w[k].cmd <- f
}

// park sends f to worker k, which the model has marked parked.
func (d *driver) park(k int, f func() out) { d.w[k].cmd <- f }

func (d *driver) expectOK(k int) func(out) {
	return func(o out) {
		require.Nil(d.t, o.v, "worker %d panicked\n%s", k, d)
		require.NoError(d.t, o.err, "worker %d\n%s", k, d)
		d.w[k].finish()
	}
}

func (d *driver) expectResult(k int, ok bool, err error) func(out) {
	return func(o out) {
		require.Nil(d.t, o.v, "worker %d panicked\n%s", k, d)
		require.Equal(d.t, ok, o.ok, "worker %d result\n%s", k, d)
		require.ErrorIs(d.t, o.err, err, "worker %d error\n%s", k, d) // err == nil: o.err must be nil
		d.w[k].finish()
	}
}

// expectPanic expects exactly the documented misuse panic: an error
// matching sentinel, with message msg.
func (d *driver) expectPanic(k int, sentinel error, msg string) func(out) {
	return func(o out) {
		err, isErr := o.v.(error)
		require.Truef(d.t, isErr, "worker %d: want a panic with %q, got %#v\n%s", k, msg, o.v, d)
		require.ErrorIs(d.t, err, sentinel, "worker %d\n%s", k, d)
		require.Equal(d.t, msg, err.Error(), "worker %d\n%s", k, d)
		d.w[k].finish()
	}
}

// expectBoom expects the panic of DoPanic or LockPanic, passed on.
func (d *driver) expectBoom(k int) func(out) {
	return func(o out) {
		require.Equal(d.t, errBoom, o.v, "worker %d\n%s", k, d)
		d.w[k].finish()
	}
}

// holder returns the goroutine ID of the lock's holder, or 0.
func (d *driver) holder() int64 {
	if d.owner < 0 {
		return 0
	}
	return d.w[d.owner].g
}

// expectRecursive expects worker k's (goroutine g's) recursive-locking
// panic: the message names g, then where it locked the lock and where it
// asked again (the sites of the model's own frames are library frames,
// so either may read "not recorded").
func (d *driver) expectRecursive(k int, g int64) func(out) {
	return func(o out) {
		err, isErr := o.v.(error)
		require.Truef(d.t, isErr, "worker %d: want a recursive-locking panic, got %#v\n%s", k, o.v, d)
		require.ErrorIs(d.t, err, d.s.Recursive, "worker %d\n%s", k, d)
		prefix := fmt.Sprintf("%s: deadlock; recursive locking (goroutine %d): locked at ", d.s.Pkg, g)
		require.True(d.t, strings.HasPrefix(err.Error(), prefix), "worker %d: %q does not start with %q\n%s", k, err.Error(), prefix, d)
		require.Contains(d.t, err.Error()[len(prefix):], ", locked again at ", "worker %d\n%s", k, d)
		d.w[k].finish()
	}
}

// do starts op on worker k and updates the model with what must follow.
func (d *driver) do(op Op, k int) {
	w := &d.w[k]
	if op == Cancel {
		d.cancel(k)
		return
	}
	if w.st != idle {
		d.fatalf("worker %d is not idle", k)
	}
	l, c, g := d.l, d.c, w.g
	holding := d.owner == k
	if (op == LockCtx || op == LockDone) && !d.hasCtx {
		if op == LockDone {
			return // no LockContext
		}
		op = Lock
	}
	switch op {
	case Lock, LockCtx:
		f := func() out { l.Lock(); return out{} }
		if op == LockCtx {
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() out { return out{err: l.(ctxLocker).LockContext(ctx)} }
		}
		switch {
		case holding && d.s.Reentrant:
			d.holds++
			d.run(k, f, d.expectOK(k))
		case holding && d.s.Recursive != nil:
			d.run(k, f, d.expectRecursive(k, g))
		case holding:
			w.finish() // a *sync.Mutex would hang for good
		case d.owner < 0:
			d.owner, d.holds = k, 1
			d.run(k, f, d.expectOK(k))
		default:
			w.st, w.op = inLock, op
			d.lockq = append(d.lockq, []int{k})
			d.park(k, f)
		}
	case TryLock:
		// False for everyone while held, the holder of a non-reentrant
		// lock included.
		want := d.owner < 0 || holding && d.s.Reentrant
		if want {
			d.owner = k
			d.holds++
		}
		d.run(k, func() out { return out{ok: l.(tryLocker).TryLock()} }, d.expectResult(k, want, nil))
	case LockDone:
		// Re-entry cannot block, so it succeeds whatever the context;
		// recursive locking is a broken contract whatever the context
		// says; anyone else fails, even when the lock is free.
		f := func() out { return out{err: l.(ctxLocker).LockContext(doneCtx)} }
		switch {
		case holding && d.s.Reentrant:
			d.holds++
			d.run(k, f, d.expectOK(k))
		case holding:
			d.run(k, f, d.expectRecursive(k, g))
		default:
			d.run(k, f, d.expectResult(k, false, context.Canceled))
		}
	case Unlock:
		f := func() out { l.Unlock(); return out{} }
		if !holding {
			if d.s.NotOwner != nil {
				d.run(k, f, d.expectPanic(k, d.s.NotOwner, LockMisuse(d.s.Pkg, "unlock", g, d.holder())))
			}
			return
		}
		d.holds--
		d.run(k, f, d.expectOK(k))
		if d.holds == 0 {
			d.released()
		}
	case Wait, WaitLong, WaitCtx, WaitZero, WaitDone:
		if !holding && d.s.WaitMisuse == nil {
			return
		}
		var f func() out
		switch op {
		case Wait:
			f = func() out { c.Wait(); return out{} }
		case WaitLong:
			f = func() out { return out{ok: c.WaitTimeout(long)} }
		case WaitCtx:
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() out { return out{err: c.WaitContext(ctx)} }
		case WaitZero:
			f = func() out { return out{ok: c.WaitTimeout(0)} }
		case WaitDone:
			f = func() out { return out{err: c.WaitContext(doneCtx)} }
		}
		switch {
		case !holding:
			msg, sentinel := d.s.WaitMisuse(g, d.holder())
			d.run(k, f, d.expectPanic(k, sentinel, msg))
		case op == WaitZero:
			// Returns false at once, without releasing the lock.
			d.run(k, f, d.expectResult(k, false, nil))
		case op == WaitDone:
			// Returns ctx.Err() at once, without releasing the lock.
			d.run(k, f, d.expectResult(k, false, context.Canceled))
		default:
			// Releases every hold; restores them before returning.
			w.st, w.op, w.holds = inCond, op, d.holds
			d.condq = append(d.condq, k)
			d.park(k, f)
			d.released()
		}
	case Signal, Broadcast:
		f := func() out { c.Signal(); return out{} }
		if op == Broadcast {
			f = func() out { c.Broadcast(); return out{} }
		}
		if !holding && d.s.SignalMisuse != nil {
			msg, sentinel := d.s.SignalMisuse(g, d.holder())
			d.run(k, f, d.expectPanic(k, sentinel, msg))
			return
		}
		d.run(k, f, d.expectOK(k))
		var woken []int
		if op == Signal && len(d.condq) > 0 {
			woken, d.condq = d.condq[:1:1], d.condq[1:]
		} else if op == Broadcast {
			woken, d.condq = d.condq, nil
		}
		if len(woken) > 0 {
			d.toLock(woken, true)
		}
	case DoPanic:
		if !holding && d.owner >= 0 {
			return // Do would park, and take and drop the lock in one step when woken
		}
		holds, do, hc := d.holds, d.in.Do, l.(holdCounter)
		d.run(k, func() out {
			do(func() {
				if h := hc.HoldCount(); h != holds+1 {
					panic(fmt.Sprintf("HoldCount inside Do = %d, want %d", h, holds+1))
				}
				panic(errBoom)
			})
			return out{}
		}, d.expectBoom(k))
	case LockPanic:
		f := func() out {
			l.Lock()
			defer l.Unlock()
			panic(errBoom)
		}
		switch {
		case holding && !d.s.Reentrant:
			// Lock panics before the deferred Unlock is set up: the
			// lock stays held.
			d.run(k, f, d.expectRecursive(k, g))
		case holding || d.owner < 0:
			// The deferred Unlock runs as the panic unwinds.
			d.run(k, f, d.expectBoom(k))
		}
		// Held by another worker: not run (it would park, and take and
		// drop the lock in one step when woken).
	default:
		d.fatalf("unknown op %v", op)
	}
}

var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// cancel cancels worker k's pending context, if it has one.
func (d *driver) cancel(k int) {
	w := &d.w[k]
	if w.cancel == nil || w.cancelled || w.st == idle {
		return
	}
	w.cancel()
	w.cancelled = true
	switch w.st {
	case inLock:
		// LockContext gives up and returns ctx.Err(), not holding the lock.
		d.removeFromLockq(k)
		d.pending[k] = d.expectResult(k, false, context.Canceled)
	case inCond:
		// WaitContext leaves the condition and retakes the lock before
		// returning ctx.Err().
		i := slices.Index(d.condq, k)
		d.condq = slices.Delete(d.condq, i, i+1)
		d.toLock([]int{k}, false)
	case relock:
		// Signalled before: the cancellation comes too late to matter.
	}
}

func (d *driver) removeFromLockq(k int) {
	for i, grp := range d.lockq {
		if j := slices.Index(grp, k); j >= 0 {
			grp = slices.Delete(slices.Clone(grp), j, j+1)
			if len(grp) == 0 {
				d.lockq = slices.Delete(d.lockq, i, i+1)
			} else {
				d.lockq[i] = grp
			}
			return
		}
	}
	d.fatalf("worker %d is not on the lock's queue", k)
}

// toLock moves workers woken from the condition to the lock: they queue
// behind the lock's waiters, or, if it is free, one of them takes it.
func (d *driver) toLock(ws []int, signalled bool) {
	for _, k := range ws {
		d.w[k].st, d.w[k].signalled = relock, signalled
	}
	d.lockq = append(d.lockq, slices.Clone(ws))
	if d.owner < 0 && len(d.lockq) == 1 {
		d.anyOf = slices.Clone(d.lockq[0])
	}
}

// released records that the lock became free: the first of its queue
// takes it.
func (d *driver) released() {
	d.owner, d.holds = -1, 0
	if len(d.lockq) > 0 {
		d.anyOf = slices.Clone(d.lockq[0])
	}
}

// acquired records that worker k, parked on the lock, took it.
func (d *driver) acquired(k int, o out) {
	if d.owner >= 0 {
		d.fatalf("worker %d took the lock held by worker %d", k, d.owner)
	}
	d.removeFromLockq(k)
	w := &d.w[k]
	switch w.st {
	case inLock:
		d.owner, d.holds = k, 1
		d.expectOK(k)(o)
	case relock:
		d.owner, d.holds = k, w.holds
		switch w.op {
		case Wait:
			d.expectOK(k)(o)
		case WaitLong:
			d.expectResult(k, w.signalled, nil)(o)
		case WaitCtx:
			var want error
			if !w.signalled {
				want = context.Canceled
			}
			d.expectResult(k, false, want)(o)
		}
	default:
		d.fatalf("worker %d returned from %v while not waiting for the lock: %v", k, w.op, o)
	}
}

// collect waits for every operation the model says must return.
func (d *driver) collect() {
	if len(d.pending) == 0 && d.anyOf == nil {
		return
	}
	timer := time.NewTimer(testutil.Liveness)
	defer timer.Stop()
	for len(d.pending) > 0 || d.anyOf != nil {
		select {
		case o := <-d.done:
			d.received(o)
		case <-timer.C:
			d.fatalf("after %v, still waiting for workers %v to return and one of %v to take the lock",
				testutil.Liveness, sortedKeys(d.pending), d.anyOf)
		}
	}
}

func (d *driver) received(o out) {
	if check, ok := d.pending[o.w]; ok {
		delete(d.pending, o.w)
		check(o)
		return
	}
	if slices.Contains(d.anyOf, o.w) {
		d.anyOf = nil
		d.acquired(o.w, o)
		return
	}
	d.fatalf("worker %d returned, but the model has it parked: %v", o.w, o)
}

// settle waits until the lock and the condition show the model's state:
// parked workers have parked, a released lock is free.
func (d *driver) settle() {
	if d.owner < 0 && len(d.lockq) > 0 {
		d.fatalf("model: the lock is free with waiters %v", d.lockq)
	}
	deadline := time.Now().Add(testutil.Liveness)
	for {
		select {
		case o := <-d.done:
			d.fatalf("worker %d returned, but the model has it parked: %v", o.w, o)
		default:
		}
		got := d.observe()
		want := d.expected()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			d.fatalf("after %v the lock shows %s, the model %s", testutil.Liveness, got, want)
		}
		runtime.Gosched()
	}
}

type view struct {
	locked  bool
	queued  int // on the lock
	waiting int // on the condition
}

func (v view) String() string {
	return fmt.Sprintf("{locked=%v queued=%d waiting=%d}", v.locked, v.queued, v.waiting)
}

func (d *driver) expected() view {
	v := view{locked: d.owner >= 0, waiting: len(d.condq)}
	for _, g := range d.lockq {
		v.queued += len(g)
	}
	return v
}

func (d *driver) observe() view {
	var v view
	if d.c != nil {
		v.waiting = d.c.Waiters()
	}
	if d.in.QueueLen != nil {
		v.locked = d.l.(ownerLocker).Locked()
		v.queued = d.in.QueueLen()
		return v
	}
	// The lock shows neither its holder nor its queue: count the workers
	// parked in its Lock, then see whether it is free. The TryLock is
	// made only once the rest matches, so that it cannot take the lock
	// ahead of a worker the model expects to get it.
	want := map[int64]bool{}
	for _, grp := range d.lockq {
		for _, k := range grp {
			want[d.w[k].g] = true
		}
	}
	v.queued = parkedIn(want, d.in.ParkedIn)
	v.locked = true
	if v.waiting == len(d.condq) && v.queued == len(want) {
		if d.l.(tryLocker).TryLock() {
			d.l.Unlock()
			v.locked = false
		}
	}
	return v
}

// parkedIn counts the goroutines of want whose wait reason, shown in
// their stack header, starts with reason.
func parkedIn(want map[int64]bool, reason string) int {
	if len(want) == 0 {
		return 0
	}
	count := 0
	for _, line := range strings.Split(testutil.AllStacks(), "\n") {
		rest, ok := strings.CutPrefix(line, "goroutine ")
		if !ok {
			continue
		}
		id, status, ok := strings.Cut(rest, " [")
		if !ok {
			continue
		}
		g, err := strconv.ParseInt(id, 10, 64)
		if err == nil && want[g] && strings.HasPrefix(status, reason) {
			count++
		}
	}
	return count
}

// probe asks every idle worker whether it holds the lock, and how often.
func (d *driver) probe() {
	ol, ok := d.l.(ownerLocker)
	if !ok {
		return
	}
	hc, _ := d.l.(holdCounter)
	for k := range d.w {
		if d.w[k].st != idle {
			continue
		}
		wantOwned := d.owner == k
		wantHolds := 0
		if wantOwned {
			wantHolds = d.holds
		}
		d.run(k, func() out {
			o := out{ok: ol.Owned()}
			if hc != nil {
				o.holds = hc.HoldCount()
			}
			return o
		}, func(o out) {
			require.Nil(d.t, o.v, "probe of worker %d panicked\n%s", k, d)
			require.Equal(d.t, wantOwned, o.ok, "worker %d: Owned\n%s", k, d)
			if hc != nil {
				require.Equal(d.t, wantHolds, o.holds, "worker %d: HoldCount\n%s", k, d)
			}
		})
	}
	d.collect()
}

// drain cancels, signals and unlocks until every worker is idle and the
// lock is free. It uses the janitor when all the others wait on the
// condition.
func (d *driver) drain() {
	d.trace = append(d.trace, "drain:")
	for range 10 * (maxOps + Workers) {
		if k := d.cancellable(); k >= 0 {
			d.step(Cancel, k)
			continue
		}
		if d.owner >= 0 {
			if len(d.condq) > 0 {
				d.step(Broadcast, d.owner)
			} else {
				d.step(Unlock, d.owner)
			}
			continue
		}
		if len(d.condq) > 0 {
			d.step(Lock, d.idle())
			continue
		}
		for k := range d.w {
			if d.w[k].st != idle {
				d.fatalf("drained, but worker %d is not idle", k)
			}
		}
		return
	}
	d.fatalf("drain does not end")
}

// cancellable returns a worker whose cancellation ends a wait, or -1.
func (d *driver) cancellable() int {
	for k := range d.w {
		w := &d.w[k]
		if w.cancel != nil && !w.cancelled && (w.st == inLock || w.st == inCond) {
			return k
		}
	}
	return -1
}

func (d *driver) idle() int {
	for k := range d.w {
		if d.w[k].st == idle {
			return k
		}
	}
	d.fatalf("no idle worker")
	return -1
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
