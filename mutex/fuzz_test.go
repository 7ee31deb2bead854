package mutex_test

// Model-based fuzzing of Mutex.
//
// An input is a detection mode (first byte) and then one operation per
// byte, each addressed to one of three worker goroutines. The test drives
// the workers one step at a time through channels: it tells a worker to
// run an operation and then waits until the reference model's prediction
// is observed, which is always one of two things: the operation returned
// (its result is checked), or the worker is parked on the mutex's queue
// (seen with WaitQueueLen). Nothing is timed: between steps every worker is
// idle or parked, so each step has exactly one correct outcome, including
// which queued worker an Unlock hands the mutex to (the first: nobody
// barges in while the test waits).
//
// After each step the model is compared with what the mutex reports
// (Locked, queue length) and with what each idle worker sees (Owned).
// Misuse (Unlock by a non-owner or of an unlocked mutex, recursive Lock or
// LockContext) must panic with exactly the documented error and change
// nothing. A panic between Lock and a deferred Unlock must leave the mutex
// free. At the end the test cancels and unlocks until every worker is idle
// and the mutex free, then stops the workers and waits for them to exit.
//
// Run longer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzMutex$' -fuzztime 5m ./mutex
//
// Go 1.26's fuzzing coordinator may end a run bounded by time with a
// spurious "context deadline exceeded" and no failing input (a known race,
// golang/go#75804, fixed in Go 1.27); bounding it by a count, such as
// -fuzztime 200000x, avoids that.
//
// The seed corpus is testdata/fuzz/FuzzMutex/<seed name>; TestFuzzMutexSeeds
// checks it against fzSeeds, and rewrites it with -fuzzseeds.write.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
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
	"github.com/locksmith-go/locksmith/mutex"
)

func FuzzMutex(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fzRun(t, data) })
}

const (
	fzWorkers  = 3   // workers the input addresses
	fzMaxOps   = 256 // operations per input; the rest is ignored
	fzLiveness = 10 * time.Second
)

// fzOp is one operation of the input.
type fzOp uint8

const (
	fzLock      fzOp = iota // Lock
	fzTryLock               // TryLock
	fzLockCtx               // LockContext with a context the test cancels with fzCancel
	fzLockDone              // LockContext with a context already done
	fzUnlock                // Unlock
	fzCancel                // cancel the worker's pending LockContext
	fzLockPanic             // Lock, defer Unlock, panic
	fzNumOps
)

var fzOpNames = [fzNumOps]string{"Lock", "TryLock", "LockCtx", "LockDone", "Unlock", "Cancel", "LockPanic"}

func (o fzOp) String() string { return fzOpNames[o] }

// fzStep is one decoded operation: op by worker w.
type fzStep struct {
	op fzOp
	w  int
}

func fzDecode(b byte) fzStep {
	return fzStep{op: fzOp(b % byte(fzNumOps)), w: int(b/byte(fzNumOps)) % fzWorkers}
}

func fzEncode(mode detect.Mode, steps ...fzStep) []byte {
	out := []byte{byte(mode)}
	for _, s := range steps {
		out = append(out, byte(s.op)+byte(fzNumOps)*byte(s.w))
	}
	return out
}

// fzOut is what a worker's operation did.
type fzOut struct {
	w   int   // the worker
	v   any   // the recovered panic value, or nil
	err error // LockContext
	ok  bool  // TryLock; Owned for a probe
}

func (o fzOut) String() string {
	return fmt.Sprintf("{worker %d: panic=%v err=%v ok=%v}", o.w, o.v, o.err, o.ok)
}

type fzWorker struct {
	cmd       chan func() fzOut
	g         int64              // goroutine ID
	parked    bool               // in Lock or LockContext
	cancel    context.CancelFunc // of the pending LockContext
	cancelled bool
}

// finish marks w idle and releases its context.
func (w *fzWorker) finish() {
	if w.cancel != nil {
		w.cancel()
	}
	*w = fzWorker{cmd: w.cmd, g: w.g}
}

// fzDriver runs one input: the workers, the mutex and the model.
type fzDriver struct {
	t      testing.TB
	m      *mutex.Mutex
	w      [fzWorkers]fzWorker
	done   chan fzOut
	exited sync.WaitGroup

	// The model.
	owner int   // the worker holding the mutex, or -1
	queue []int // workers parked on it, in FIFO order

	pending map[int]func(fzOut) // workers whose operation must return, with the check
	next    int                 // the worker that must take the mutex next, or -1

	reports atomic.Int32
	trace   []string
}

// fzBoom is what fzLockPanic panics with.
var fzBoom = errors.New("boom")

func fzRun(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	d := &fzDriver{t: t, m: new(mutex.Mutex), owner: -1, next: -1,
		done: make(chan fzOut, fzWorkers), pending: map[int]func(fzOut){}}
	// Every wait below has the liveness deadline, but a send to a worker
	// stuck in the library has none: turn a hang into a crash, which the
	// fuzzer records with its input.
	defer time.AfterFunc(3*fzLiveness, func() { panic("fuzz input hung; goroutines:\n" + fzAllStacks()) }).Stop()
	mode := detect.Mode(data[0] % 3)
	d.trace = append(d.trace, "mode "+mode.String())
	// One lock: no deadlock and no lock-order inversion is possible, so
	// every report is a bug.
	defer detect.Configure(detect.WithMode(mode), detect.WithWaitTimeout(0),
		detect.WithReporter(func(r *detect.Report) { d.reports.Add(1); t.Errorf("detector report:\n%s", r) }))()
	d.start()
	ops := data[1:]
	if len(ops) > fzMaxOps {
		ops = ops[:fzMaxOps]
	}
	for _, b := range ops {
		s := fzDecode(b)
		if s.w = d.route(s); s.w >= 0 {
			d.step(s.op, s.w)
		}
	}
	d.drain()
	d.stop()
	require.Zero(t, d.reports.Load(), "detector reports")
}

// String returns the steps run so far, for failure messages.
func (d *fzDriver) String() string {
	return fmt.Sprintf("steps so far:\n\t%s", strings.Join(d.trace, "\n\t"))
}

func (d *fzDriver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), d)
}

func (d *fzDriver) start() {
	ids := make(chan int64)
	for k := range d.w {
		cmd := make(chan func() fzOut)
		d.w[k] = fzWorker{cmd: cmd}
		d.exited.Add(1)
		go func() {
			defer d.exited.Done()
			ids <- fzGoroutineID()
			for f := range cmd {
				out := fzCall(f)
				out.w = k
				d.done <- out
			}
		}()
		d.w[k].g = <-ids
	}
}

func fzCall(f func() fzOut) (out fzOut) {
	defer func() {
		if v := recover(); v != nil {
			out = fzOut{v: v}
		}
	}()
	return f()
}

// stop ends the workers, which must all be idle, and waits for them to exit.
func (d *fzDriver) stop() {
	for k := range d.w {
		close(d.w[k].cmd)
	}
	exited := make(chan struct{})
	go func() { d.exited.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(fzLiveness):
		d.fatalf("workers did not exit")
	}
}

// route returns the worker that runs s: s.w if it is idle (or s cancels),
// else the next idle worker, or -1 if all are parked.
func (d *fzDriver) route(s fzStep) int {
	if s.op == fzCancel {
		return s.w
	}
	for i := range fzWorkers {
		if k := (s.w + i) % fzWorkers; !d.w[k].parked {
			return k
		}
	}
	return -1
}

// step runs op on worker k and waits until the model's prediction is seen.
func (d *fzDriver) step(op fzOp, k int) {
	d.trace = append(d.trace, fmt.Sprintf("worker %d (goroutine %d): %v", k, d.w[k].g, op))
	d.do(op, k)
	d.collect()
	d.settle()
	d.probe()
}

// run sends f to worker k and expects it to return, checked by check.
func (d *fzDriver) run(k int, f func() fzOut, check func(fzOut)) {
	d.pending[k] = check
	d.w[k].cmd <- f
}

func (d *fzDriver) expectResult(k int, ok bool, err error) func(fzOut) {
	return func(o fzOut) {
		require.Nil(d.t, o.v, "worker %d panicked\n%s", k, d)
		require.Equal(d.t, ok, o.ok, "worker %d result\n%s", k, d)
		require.ErrorIs(d.t, o.err, err, "worker %d error\n%s", k, d) // err == nil: o.err must be nil
		d.w[k].finish()
	}
}

// expectPanic expects exactly the documented misuse panic: an error
// matching sentinel, with message msg.
func (d *fzDriver) expectPanic(k int, sentinel error, msg string) func(fzOut) {
	return func(o fzOut) {
		err, isErr := o.v.(error)
		require.Truef(d.t, isErr, "worker %d: want a panic with %q, got %#v\n%s", k, msg, o.v, d)
		require.ErrorIs(d.t, err, sentinel, "worker %d\n%s", k, d)
		require.Equal(d.t, msg, err.Error(), "worker %d\n%s", k, d)
		d.w[k].finish()
	}
}

// do starts op on worker k and updates the model with what must follow.
func (d *fzDriver) do(op fzOp, k int) {
	w := &d.w[k]
	if op == fzCancel {
		d.cancel(k)
		return
	}
	if w.parked {
		d.fatalf("worker %d is parked", k)
	}
	m, g := d.m, w.g
	holding := d.owner == k
	recursive := fmt.Sprintf("mutex: deadlock; recursive locking (goroutine %d)", g)
	switch op {
	case fzLock, fzLockCtx:
		f := func() fzOut { m.Lock(); return fzOut{} }
		if op == fzLockCtx {
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() fzOut { return fzOut{err: m.LockContext(ctx)} }
		}
		switch {
		case holding:
			d.run(k, f, d.expectPanic(k, mutex.ErrRecursiveLock, recursive))
		case d.owner < 0:
			d.owner = k
			d.run(k, f, d.expectResult(k, false, nil))
		default:
			w.parked = true
			d.queue = append(d.queue, k)
			w.cmd <- f
		}
	case fzTryLock:
		// False for everyone while held, the holder included.
		want := d.owner < 0
		if want {
			d.owner = k
		}
		d.run(k, func() fzOut { return fzOut{ok: m.TryLock()} }, d.expectResult(k, want, nil))
	case fzLockDone:
		// Fails even when the mutex is free; recursive locking is a broken
		// contract whatever the context says.
		f := func() fzOut { return fzOut{err: m.LockContext(fzDoneCtx)} }
		if holding {
			d.run(k, f, d.expectPanic(k, mutex.ErrRecursiveLock, recursive))
			return
		}
		d.run(k, f, d.expectResult(k, false, context.Canceled))
	case fzUnlock:
		f := func() fzOut { m.Unlock(); return fzOut{} }
		switch {
		case holding:
			d.run(k, f, d.expectResult(k, false, nil))
			d.released()
		case d.owner < 0:
			d.run(k, f, d.expectPanic(k, mutex.ErrNotOwner, fmt.Sprintf("mutex: unlock of unlocked mutex (by goroutine %d)", g)))
		default:
			d.run(k, f, d.expectPanic(k, mutex.ErrNotOwner,
				fmt.Sprintf("mutex: unlock by goroutine %d of mutex held by goroutine %d", g, d.w[d.owner].g)))
		}
	case fzLockPanic:
		f := func() fzOut {
			m.Lock()
			defer m.Unlock()
			panic(fzBoom)
		}
		switch {
		case holding:
			// Lock panics before the deferred Unlock is set up: the
			// mutex stays held.
			d.run(k, f, d.expectPanic(k, mutex.ErrRecursiveLock, recursive))
		case d.owner < 0:
			// The deferred Unlock runs as the panic unwinds.
			d.run(k, f, func(o fzOut) {
				require.Equal(d.t, fzBoom, o.v, "worker %d\n%s", k, d)
				d.w[k].finish()
			})
		}
		// Held by another worker: not run (it would park, and take and
		// drop the mutex in one step when woken).
	default:
		d.fatalf("unknown op %v", op)
	}
}

var fzDoneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// cancel cancels worker k's pending LockContext, if it has one: it gives
// up and returns ctx.Err(), not holding the mutex.
func (d *fzDriver) cancel(k int) {
	w := &d.w[k]
	if w.cancel == nil || w.cancelled || !w.parked {
		return
	}
	w.cancel()
	w.cancelled = true
	i := slices.Index(d.queue, k)
	d.queue = slices.Delete(d.queue, i, i+1)
	d.pending[k] = d.expectResult(k, false, context.Canceled)
}

// released records that the mutex became free: the first of its queue
// takes it.
func (d *fzDriver) released() {
	d.owner = -1
	if len(d.queue) > 0 {
		d.next = d.queue[0]
	}
}

// acquired records that worker k, parked on the mutex, took it.
func (d *fzDriver) acquired(k int, o fzOut) {
	if d.owner >= 0 || len(d.queue) == 0 || d.queue[0] != k {
		d.fatalf("worker %d took the mutex (owner %d, queue %v)", k, d.owner, d.queue)
	}
	d.queue = d.queue[1:]
	d.owner = k
	d.expectResult(k, false, nil)(o)
}

// collect waits for every operation the model says must return.
func (d *fzDriver) collect() {
	if len(d.pending) == 0 && d.next < 0 {
		return
	}
	timer := time.NewTimer(fzLiveness)
	defer timer.Stop()
	for len(d.pending) > 0 || d.next >= 0 {
		select {
		case o := <-d.done:
			d.received(o)
		case <-timer.C:
			d.fatalf("after %v, still waiting for workers %v to return and %d to take the mutex",
				fzLiveness, slices.Sorted(maps.Keys(d.pending)), d.next)
		}
	}
}

func (d *fzDriver) received(o fzOut) {
	if check, ok := d.pending[o.w]; ok {
		delete(d.pending, o.w)
		check(o)
		return
	}
	if o.w == d.next {
		d.next = -1
		d.acquired(o.w, o)
		return
	}
	d.fatalf("worker %d returned, but the model has it parked: %v", o.w, o)
}

// settle waits until the mutex shows the model's state: parked workers
// have queued, a released mutex is free.
func (d *fzDriver) settle() {
	if d.owner < 0 && len(d.queue) > 0 {
		d.fatalf("model: the mutex is free with waiters %v", d.queue)
	}
	deadline := time.Now().Add(fzLiveness)
	for {
		select {
		case o := <-d.done:
			d.fatalf("worker %d returned, but the model has it parked: %v", o.w, o)
		default:
		}
		locked, queued := d.m.Locked(), mutex.WaitQueueLen(d.m)
		if locked == (d.owner >= 0) && queued == len(d.queue) {
			return
		}
		if time.Now().After(deadline) {
			d.fatalf("after %v the mutex shows locked=%v queued=%d, the model owner %d queue %v",
				fzLiveness, locked, queued, d.owner, d.queue)
		}
		runtime.Gosched()
	}
}

// probe asks every idle worker whether it holds the mutex.
func (d *fzDriver) probe() {
	for k := range d.w {
		if d.w[k].parked {
			continue
		}
		want := d.owner == k
		d.run(k, func() fzOut { return fzOut{ok: d.m.Owned()} }, func(o fzOut) {
			require.Nil(d.t, o.v, "probe of worker %d panicked\n%s", k, d)
			require.Equal(d.t, want, o.ok, "worker %d: Owned\n%s", k, d)
		})
	}
	d.collect()
}

// drain cancels and unlocks until every worker is idle and the mutex is
// free.
func (d *fzDriver) drain() {
	d.trace = append(d.trace, "drain:")
	for range 2 * (fzMaxOps + fzWorkers) {
		switch {
		case d.cancellable() >= 0:
			d.step(fzCancel, d.cancellable())
		case d.owner >= 0:
			d.step(fzUnlock, d.owner)
		default:
			for k := range d.w {
				if d.w[k].parked {
					d.fatalf("drained, but worker %d is parked", k)
				}
			}
			return
		}
	}
	d.fatalf("drain does not end")
}

// cancellable returns a worker parked in a LockContext not yet cancelled,
// or -1.
func (d *fzDriver) cancellable() int {
	for k := range d.w {
		if w := &d.w[k]; w.parked && w.cancel != nil && !w.cancelled {
			return k
		}
	}
	return -1
}

func fzGoroutineID() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

func fzAllStacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// The seed corpus: named inputs that each exercise one rule.

func fzS(op fzOp, w int) fzStep { return fzStep{op, w} }

var fzSeeds = map[string][]byte{
	"handoff_fifo": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzLock, 1), fzS(fzLock, 2), fzS(fzUnlock, 0), fzS(fzLock, 0),
		fzS(fzUnlock, 1), fzS(fzUnlock, 2), fzS(fzUnlock, 0)),
	"recursive_lock": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzLock, 0), fzS(fzLockCtx, 0), fzS(fzTryLock, 0), fzS(fzUnlock, 0), fzS(fzLock, 0), fzS(fzUnlock, 0)),
	"unlock_misuse": fzEncode(detect.Order,
		fzS(fzUnlock, 0), fzS(fzLock, 1), fzS(fzUnlock, 0), fzS(fzUnlock, 2), fzS(fzUnlock, 1), fzS(fzUnlock, 1)),
	"trylock_everyone_false": fzEncode(detect.Cycles,
		fzS(fzTryLock, 0), fzS(fzTryLock, 0), fzS(fzTryLock, 1), fzS(fzTryLock, 2), fzS(fzUnlock, 0), fzS(fzTryLock, 2), fzS(fzUnlock, 2)),
	"cancel_queued_head": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzLockCtx, 1), fzS(fzLock, 2), fzS(fzCancel, 1), fzS(fzUnlock, 0), fzS(fzUnlock, 2)),
	"cancel_queued_tail": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzLock, 1), fzS(fzLockCtx, 2), fzS(fzCancel, 2), fzS(fzUnlock, 0), fzS(fzUnlock, 1)),
	"cancel_all_queued": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzLockCtx, 1), fzS(fzLockCtx, 2), fzS(fzCancel, 2), fzS(fzCancel, 1), fzS(fzCancel, 1), fzS(fzUnlock, 0)),
	"lockctx_done_context": fzEncode(detect.Cycles,
		fzS(fzLockDone, 0), fzS(fzLock, 0), fzS(fzLockDone, 0), fzS(fzLockDone, 1), fzS(fzUnlock, 0)),
	"panic_under_deferred_unlock": fzEncode(detect.Order,
		fzS(fzLockPanic, 0), fzS(fzLockPanic, 1), fzS(fzLock, 2), fzS(fzLockPanic, 2), fzS(fzUnlock, 2), fzS(fzLockPanic, 0)),
	"queue_then_drain": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzLockCtx, 1), fzS(fzLock, 2)),
	"requeue_after_cancel": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzLockCtx, 1), fzS(fzCancel, 1), fzS(fzLockCtx, 1), fzS(fzLock, 2), fzS(fzUnlock, 0),
		fzS(fzCancel, 2), fzS(fzUnlock, 1), fzS(fzUnlock, 2)),
	"ping_pong": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzLock, 1), fzS(fzUnlock, 0), fzS(fzLock, 0), fzS(fzUnlock, 1), fzS(fzLock, 1),
		fzS(fzUnlock, 0), fzS(fzLock, 0), fzS(fzUnlock, 1), fzS(fzUnlock, 0)),
}

var fzWriteSeeds = flag.Bool("fuzzseeds.write", false, "rewrite the fuzz seed corpus under testdata/fuzz")

// TestFuzzMutexSeeds checks that the committed seed corpus is the one
// fzSeeds describes (rewriting it with -fuzzseeds.write); plain go test
// then runs every seed through FuzzMutex.
func TestFuzzMutexSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzMutex")
	for name, data := range fzSeeds {
		path := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *fzWriteSeeds {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "seed %s (run go test ./mutex -run TestFuzzMutexSeeds -fuzzseeds.write to write it)", path)
		require.Equal(t, want, string(got), "seed %s is stale (run go test ./mutex -run TestFuzzMutexSeeds -fuzzseeds.write)", path)
	}
}
