package condvar_test

// Model-based fuzzing of Cond on each kind of lock it is documented for:
// *sync.Mutex (a plain Locker), *mutex.Mutex and *monitor.Monitor.
//
// An input is a detection mode (first byte) and then one operation per
// byte, each addressed to one of three worker goroutines. The test drives
// the workers one step at a time through channels: it tells a worker to
// run an operation and then waits until the reference model's prediction
// is observed, which is always one of two things: the operation returned
// (its result is checked), or the worker is parked (on the lock's queue,
// seen with LockQueueLen or, for *sync.Mutex, in the goroutine's stack; or
// on the Cond, seen with Waiters). Nothing is timed: between steps every
// worker is idle or parked, so each step has exactly one correct outcome,
// except the order in which the waiters woken by one Broadcast queue on the
// lock, which the model leaves open (any of them may be first).
//
// After each step the model is compared with what the lock reports (held,
// queue length, Cond waiters) and with what each idle worker sees (Owned,
// HoldCount). Misuse (Wait without an owner-aware lock, Unlock by a
// non-owner, recursive Lock of a Mutex) must panic with exactly the
// documented error and change nothing. Waits with a timeout use a timeout
// that never expires in a test (an hour) or zero; timeouts racing signals
// are the stress tests' business (internal/stress). At the end the test
// cancels, signals and unlocks until every worker is idle and the lock
// free, then stops the workers and waits for them to exit.
//
// Run longer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzCondMonitor$' -fuzztime 5m ./condvar
//
// Go 1.26's fuzzing coordinator may end a run bounded by time with a
// spurious "context deadline exceeded" and no failing input (a known race,
// golang/go#75804, fixed in Go 1.27); bounding it by a count, such as
// -fuzztime 200000x, avoids that.
//
// The seed corpus is testdata/fuzz/<target>/<seed name>; TestFuzzCondSeeds
// checks it against fzCondSeeds, and rewrites it with -fuzzseeds.write.

import (
	"context"
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

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func FuzzCondSyncMutex(f *testing.F) { fzCondFuzz(f, fzKindSyncMutex) }
func FuzzCondMutex(f *testing.F)     { fzCondFuzz(f, fzKindMutex) }
func FuzzCondMonitor(f *testing.F)   { fzCondFuzz(f, fzKindMonitor) }

func fzCondFuzz(f *testing.F, k fzKind) {
	f.Fuzz(func(t *testing.T, data []byte) { fzRun(t, k, data) })
}

const (
	fzWorkers  = 3         // workers the input addresses
	fzMaxOps   = 256       // operations per input; the rest is ignored
	fzLong     = time.Hour // a WaitTimeout that never expires in a test
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
	fzCancel                // cancel the worker's pending LockContext or WaitContext
	fzWait                  // Wait
	fzWaitLong              // WaitTimeout(fzLong)
	fzWaitZero              // WaitTimeout(0)
	fzWaitCtx               // WaitContext with a context the test cancels with fzCancel
	fzWaitDone              // WaitContext with a context already done
	fzSignal                // Signal
	fzBroadcast             // Broadcast
	fzNumOps
)

var fzOpNames = [fzNumOps]string{
	"Lock", "TryLock", "LockCtx", "LockDone", "Unlock", "Cancel",
	"Wait", "WaitLong", "WaitZero", "WaitCtx", "WaitDone", "Signal", "Broadcast",
}

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

// A fzKind is a lock a Cond is fuzzed on.
type fzKind struct {
	name       string
	target     string // the fuzz target's name
	newLock    func() sync.Locker
	ownerAware bool // misuse panics; the lock reports Owned and Locked
	reentrant  bool
	hasCtx     bool   // LockContext
	pkg        string // the prefix of its misuse messages, "mutex" or "monitor"
}

var (
	fzKindSyncMutex = fzKind{name: "sync.Mutex", target: "FuzzCondSyncMutex",
		newLock: func() sync.Locker { return new(sync.Mutex) }}
	fzKindMutex = fzKind{name: "mutex.Mutex", target: "FuzzCondMutex",
		newLock:    func() sync.Locker { return new(mutex.Mutex) },
		ownerAware: true, hasCtx: true, pkg: "mutex"}
	fzKindMonitor = fzKind{name: "monitor.Monitor", target: "FuzzCondMonitor",
		newLock:    func() sync.Locker { return new(monitor.Monitor) },
		ownerAware: true, reentrant: true, hasCtx: true, pkg: "monitor"}
)

type (
	fzTryLocker interface{ TryLock() bool }
	fzCtxLocker interface {
		LockContext(context.Context) error
	}
	fzOwnerLocker interface {
		Owned() bool
		Locked() bool
	}
	fzHoldCounter interface{ HoldCount() int }
)

// fzOut is what a worker's operation did.
type fzOut struct {
	w     int   // the worker
	v     any   // the recovered panic value, or nil
	err   error // LockContext, WaitContext
	ok    bool  // TryLock, WaitTimeout; Owned for a probe
	holds int   // HoldCount, for a probe of a Monitor
}

func (o fzOut) String() string {
	return fmt.Sprintf("{worker %d: panic=%v err=%v ok=%v holds=%d}", o.w, o.v, o.err, o.ok, o.holds)
}

// fzState is where a worker is between steps.
type fzState int

const (
	fzIdle   fzState = iota
	fzInLock         // parked in Lock or LockContext
	fzInCond         // parked on the Cond
	fzRelock         // out of the Cond (signalled or cancelled), parked retaking the lock
)

type fzWorker struct {
	cmd       chan func() fzOut
	g         int64 // goroutine ID
	st        fzState
	op        fzOp               // the operation it is parked in
	cancel    context.CancelFunc // of the pending LockContext or WaitContext
	cancelled bool
	holds     int  // the hold count its wait restores
	signalled bool // fzRelock: it left the Cond by a signal, not a cancellation
}

// finish marks w idle and releases its context.
func (w *fzWorker) finish() {
	if w.cancel != nil {
		w.cancel()
	}
	*w = fzWorker{cmd: w.cmd, g: w.g}
}

// fzDriver runs one input: the workers, the lock and Cond under test, and
// the model.
type fzDriver struct {
	t      testing.TB
	kind   fzKind
	l      sync.Locker
	c      *condvar.Cond
	w      [fzWorkers + 1]fzWorker // the last is the janitor: used only to drain
	done   chan fzOut
	exited sync.WaitGroup

	// The model.
	owner int     // the worker holding the lock, or -1
	holds int     // its hold count
	lockq [][]int // workers parked on the lock, in queue order; a group's order is open
	condq []int   // workers parked on the Cond, in FIFO order

	pending map[int]func(fzOut) // workers whose operation must return, with the check
	anyOf   []int               // one of these must take the lock next (lockq[0])

	reports atomic.Int32
	trace   []string
}

func fzRun(t *testing.T, kind fzKind, data []byte) {
	if len(data) == 0 {
		return
	}
	d := &fzDriver{t: t, kind: kind, l: kind.newLock(), owner: -1,
		done: make(chan fzOut, fzWorkers+1), pending: map[int]func(fzOut){}}
	d.c = condvar.New(d.l)
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
	return fmt.Sprintf("lock %s; steps so far:\n\t%s", d.kind.name, strings.Join(d.trace, "\n\t"))
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
		if k := (s.w + i) % fzWorkers; d.w[k].st == fzIdle {
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

// park sends f to worker k, which the model has marked parked.
func (d *fzDriver) park(k int, f func() fzOut) { d.w[k].cmd <- f }

func (d *fzDriver) expectOK(k int) func(fzOut) {
	return func(o fzOut) {
		require.Nil(d.t, o.v, "worker %d panicked\n%s", k, d)
		require.NoError(d.t, o.err, "worker %d\n%s", k, d)
		d.w[k].finish()
	}
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
	if w.st != fzIdle {
		d.fatalf("worker %d is not idle", k)
	}
	l, c, g := d.l, d.c, w.g
	holding := d.owner == k
	if (op == fzLockCtx || op == fzLockDone) && !d.kind.hasCtx {
		if op == fzLockDone {
			return // *sync.Mutex has no LockContext
		}
		op = fzLock
	}
	switch op {
	case fzLock, fzLockCtx:
		f := func() fzOut { l.Lock(); return fzOut{} }
		if op == fzLockCtx {
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() fzOut { return fzOut{err: l.(fzCtxLocker).LockContext(ctx)} }
		}
		switch {
		case holding && d.kind.reentrant:
			d.holds++
			d.run(k, f, d.expectOK(k))
		case holding && d.kind.ownerAware:
			d.run(k, f, d.expectPanic(k, mutex.ErrRecursiveLock,
				fmt.Sprintf("mutex: deadlock; recursive locking (goroutine %d)", g)))
		case holding:
			w.finish() // a *sync.Mutex would hang for good
		case d.owner < 0:
			d.owner, d.holds = k, 1
			d.run(k, f, d.expectOK(k))
		default:
			w.st, w.op = fzInLock, op
			d.lockq = append(d.lockq, []int{k})
			d.park(k, f)
		}
	case fzTryLock:
		want := d.owner < 0 || holding && d.kind.reentrant
		if want {
			d.owner = k
			d.holds++
		}
		d.run(k, func() fzOut { return fzOut{ok: l.(fzTryLocker).TryLock()} }, d.expectResult(k, want, nil))
	case fzLockDone:
		f := func() fzOut { return fzOut{err: l.(fzCtxLocker).LockContext(fzDoneCtx)} }
		switch {
		case holding && d.kind.reentrant:
			d.holds++
			d.run(k, f, d.expectOK(k))
		case holding:
			d.run(k, f, d.expectPanic(k, mutex.ErrRecursiveLock,
				fmt.Sprintf("mutex: deadlock; recursive locking (goroutine %d)", g)))
		default:
			d.run(k, f, d.expectResult(k, false, context.Canceled))
		}
	case fzUnlock:
		if !holding {
			if d.kind.ownerAware {
				d.run(k, func() fzOut { l.Unlock(); return fzOut{} }, d.expectPanic(k, mutex.ErrNotOwner, d.unlockMisuse(g)))
			}
			return
		}
		d.holds--
		d.run(k, func() fzOut { l.Unlock(); return fzOut{} }, d.expectOK(k))
		if d.holds == 0 {
			d.released()
		}
	case fzWait, fzWaitLong, fzWaitCtx, fzWaitZero, fzWaitDone:
		if !holding && !d.kind.ownerAware {
			return // *sync.Mutex: Wait without the lock unlocks an unlocked mutex, a fatal error
		}
		var f func() fzOut
		switch op {
		case fzWait:
			f = func() fzOut { c.Wait(); return fzOut{} }
		case fzWaitLong:
			f = func() fzOut { return fzOut{ok: c.WaitTimeout(fzLong)} }
		case fzWaitCtx:
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() fzOut { return fzOut{err: c.WaitContext(ctx)} }
		case fzWaitZero:
			f = func() fzOut { return fzOut{ok: c.WaitTimeout(0)} }
		case fzWaitDone:
			f = func() fzOut { return fzOut{err: c.WaitContext(fzDoneCtx)} }
		}
		switch {
		case !holding:
			d.run(k, f, d.expectPanic(k, condvar.ErrNotOwner,
				fmt.Sprintf("condvar: wait without holding the lock (goroutine %d)", g)))
		case op == fzWaitZero:
			// Returns false at once, without releasing the lock.
			d.run(k, f, d.expectResult(k, false, nil))
		case op == fzWaitDone:
			// Returns ctx.Err() at once, without releasing the lock.
			d.run(k, f, d.expectResult(k, false, context.Canceled))
		default:
			w.st, w.op, w.holds = fzInCond, op, d.holds
			d.condq = append(d.condq, k)
			d.park(k, f)
			d.released()
		}
	case fzSignal, fzBroadcast:
		f := func() fzOut { c.Signal(); return fzOut{} }
		if op == fzBroadcast {
			f = func() fzOut { c.Broadcast(); return fzOut{} }
		}
		// With or without the lock, on every kind of lock, as sync.Cond.
		d.run(k, f, d.expectOK(k))
		var woken []int
		if op == fzSignal && len(d.condq) > 0 {
			woken, d.condq = d.condq[:1:1], d.condq[1:]
		} else if op == fzBroadcast {
			woken, d.condq = d.condq, nil
		}
		if len(woken) > 0 {
			d.toLock(woken, true)
		}
	default:
		d.fatalf("unknown op %v", op)
	}
}

var fzDoneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (d *fzDriver) unlockMisuse(g int64) string {
	if d.owner < 0 {
		return fmt.Sprintf("%s: unlock of unlocked %s (by goroutine %d)", d.kind.pkg, d.kind.pkg, g)
	}
	return fmt.Sprintf("%s: unlock by goroutine %d of %s held by goroutine %d", d.kind.pkg, g, d.kind.pkg, d.w[d.owner].g)
}

// cancel cancels worker k's pending context, if it has one.
func (d *fzDriver) cancel(k int) {
	w := &d.w[k]
	if w.cancel == nil || w.cancelled || w.st == fzIdle {
		return
	}
	w.cancel()
	w.cancelled = true
	switch w.st {
	case fzInLock:
		// LockContext gives up and returns ctx.Err(), not holding the lock.
		d.removeFromLockq(k)
		d.pending[k] = d.expectResult(k, false, context.Canceled)
	case fzInCond:
		// WaitContext leaves the Cond and retakes the lock before
		// returning ctx.Err().
		i := slices.Index(d.condq, k)
		d.condq = slices.Delete(d.condq, i, i+1)
		d.toLock([]int{k}, false)
	case fzRelock:
		// Signalled before: the cancellation comes too late to matter.
	}
}

func (d *fzDriver) removeFromLockq(k int) {
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

// toLock moves workers woken from the Cond to the lock: they queue behind
// the lock's waiters, or, if it is free, one of them takes it.
func (d *fzDriver) toLock(ws []int, signalled bool) {
	for _, k := range ws {
		d.w[k].st, d.w[k].signalled = fzRelock, signalled
	}
	d.lockq = append(d.lockq, slices.Clone(ws))
	if d.owner < 0 && len(d.lockq) == 1 {
		d.anyOf = slices.Clone(d.lockq[0])
	}
}

// released records that the lock became free: the first of its queue
// takes it.
func (d *fzDriver) released() {
	d.owner, d.holds = -1, 0
	if len(d.lockq) > 0 {
		d.anyOf = slices.Clone(d.lockq[0])
	}
}

// acquired records that worker k, parked on the lock, took it.
func (d *fzDriver) acquired(k int, o fzOut) {
	if d.owner >= 0 {
		d.fatalf("worker %d took the lock held by worker %d", k, d.owner)
	}
	d.removeFromLockq(k)
	w := &d.w[k]
	switch w.st {
	case fzInLock:
		d.owner, d.holds = k, 1
		d.expectOK(k)(o)
	case fzRelock:
		d.owner, d.holds = k, w.holds
		switch w.op {
		case fzWait:
			d.expectOK(k)(o)
		case fzWaitLong:
			d.expectResult(k, w.signalled, nil)(o)
		case fzWaitCtx:
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
func (d *fzDriver) collect() {
	if len(d.pending) == 0 && d.anyOf == nil {
		return
	}
	timer := time.NewTimer(fzLiveness)
	defer timer.Stop()
	for len(d.pending) > 0 || d.anyOf != nil {
		select {
		case o := <-d.done:
			d.received(o)
		case <-timer.C:
			d.fatalf("after %v, still waiting for workers %v to return and one of %v to take the lock",
				fzLiveness, slices.Sorted(maps.Keys(d.pending)), d.anyOf)
		}
	}
}

func (d *fzDriver) received(o fzOut) {
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

// settle waits until the lock and the Cond show the model's state: parked
// workers have parked, a released lock is free.
func (d *fzDriver) settle() {
	if d.owner < 0 && len(d.lockq) > 0 {
		d.fatalf("model: the lock is free with waiters %v", d.lockq)
	}
	deadline := time.Now().Add(fzLiveness)
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
			d.fatalf("after %v the lock shows %s, the model %s", fzLiveness, got, want)
		}
		runtime.Gosched()
	}
}

type fzView struct {
	locked  bool
	queued  int // on the lock
	waiting int // on the Cond
}

func (v fzView) String() string {
	return fmt.Sprintf("{locked=%v queued=%d waiting=%d}", v.locked, v.queued, v.waiting)
}

func (d *fzDriver) expected() fzView {
	v := fzView{locked: d.owner >= 0, waiting: len(d.condq)}
	for _, g := range d.lockq {
		v.queued += len(g)
	}
	return v
}

func (d *fzDriver) observe() fzView {
	v := fzView{waiting: d.c.Waiters()}
	if ol, ok := d.l.(fzOwnerLocker); ok {
		v.locked = ol.Locked()
		v.queued = condvar.LockQueueLen(d.l)
		return v
	}
	// A *sync.Mutex shows neither its holder nor its queue: count the
	// workers parked in its Lock, then see whether it is free. The
	// TryLock is made only once the rest matches, so that it cannot take
	// the mutex ahead of a worker the model expects to get it.
	want := map[int64]bool{}
	for _, grp := range d.lockq {
		for _, k := range grp {
			want[d.w[k].g] = true
		}
	}
	v.queued = fzParkedInSyncMutexLock(want)
	v.locked = true
	if v.waiting == len(d.condq) && v.queued == len(want) {
		mu := d.l.(*sync.Mutex)
		if mu.TryLock() {
			mu.Unlock()
			v.locked = false
		}
	}
	return v
}

// probe asks every idle worker whether it holds the lock, and how often.
func (d *fzDriver) probe() {
	ol, ok := d.l.(fzOwnerLocker)
	if !ok {
		return
	}
	hc, _ := d.l.(fzHoldCounter)
	for k := range d.w {
		if d.w[k].st != fzIdle {
			continue
		}
		wantOwned := d.owner == k
		wantHolds := 0
		if wantOwned {
			wantHolds = d.holds
		}
		d.run(k, func() fzOut {
			o := fzOut{ok: ol.Owned()}
			if hc != nil {
				o.holds = hc.HoldCount()
			}
			return o
		}, func(o fzOut) {
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
// lock is free. It uses the janitor when all the others wait on the Cond.
func (d *fzDriver) drain() {
	d.trace = append(d.trace, "drain:")
	for range 10 * (fzMaxOps + fzWorkers) {
		if k := d.cancellable(); k >= 0 {
			d.step(fzCancel, k)
			continue
		}
		if d.owner >= 0 {
			if len(d.condq) > 0 {
				d.step(fzBroadcast, d.owner)
			} else {
				d.step(fzUnlock, d.owner)
			}
			continue
		}
		if len(d.condq) > 0 {
			d.step(fzLock, d.idle())
			continue
		}
		for k := range d.w {
			if d.w[k].st != fzIdle {
				d.fatalf("drained, but worker %d is not idle", k)
			}
		}
		return
	}
	d.fatalf("drain does not end")
}

// cancellable returns a worker whose cancellation ends a wait, or -1.
func (d *fzDriver) cancellable() int {
	for k := range d.w {
		w := &d.w[k]
		if w.cancel != nil && !w.cancelled && (w.st == fzInLock || w.st == fzInCond) {
			return k
		}
	}
	return -1
}

func (d *fzDriver) idle() int {
	for k := range d.w {
		if d.w[k].st == fzIdle {
			return k
		}
	}
	d.fatalf("no idle worker")
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

// fzParkedInSyncMutexLock counts the goroutines of want that are parked in
// sync.Mutex.Lock (the runtime's wait reason, shown in their stack header).
func fzParkedInSyncMutexLock(want map[int64]bool) int {
	if len(want) == 0 {
		return 0
	}
	count := 0
	for _, line := range strings.Split(fzAllStacks(), "\n") {
		rest, ok := strings.CutPrefix(line, "goroutine ")
		if !ok {
			continue
		}
		id, status, ok := strings.Cut(rest, " [")
		if !ok {
			continue
		}
		g, err := strconv.ParseInt(id, 10, 64)
		if err == nil && want[g] && strings.HasPrefix(status, "sync.Mutex.Lock") {
			count++
		}
	}
	return count
}

// The seed corpus: named inputs that each exercise one rule. They are the
// same for every lock kind; where a rule does not apply to a kind (re-entry
// on a Mutex), the seed checks what happens instead (the recursive-lock
// panic).

func fzS(op fzOp, w int) fzStep { return fzStep{op, w} }

var fzCondSeeds = map[string][]byte{
	"signal_fifo": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWaitLong, 1), fzS(fzLock, 2),
		fzS(fzSignal, 2), fzS(fzSignal, 2), fzS(fzSignal, 2), fzS(fzUnlock, 2), fzS(fzUnlock, 0), fzS(fzUnlock, 1)),
	"broadcast_all": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWaitCtx, 1), fzS(fzLock, 2), fzS(fzWaitLong, 2),
		fzS(fzLock, 0), fzS(fzBroadcast, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 1), fzS(fzUnlock, 2), fzS(fzUnlock, 0)),
	"cancel_wait_lock_held": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWaitCtx, 0), fzS(fzLock, 1), fzS(fzCancel, 0), fzS(fzSignal, 1), fzS(fzUnlock, 1), fzS(fzUnlock, 0)),
	"cancel_wait_lock_free": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzWaitCtx, 0), fzS(fzCancel, 0), fzS(fzUnlock, 0), fzS(fzLock, 1), fzS(fzUnlock, 1)),
	"signal_then_cancel_too_late": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzWaitCtx, 0), fzS(fzLock, 1), fzS(fzSignal, 1), fzS(fzCancel, 0), fzS(fzUnlock, 1), fzS(fzUnlock, 0)),
	"wait_zero_and_done_ctx": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWaitZero, 0), fzS(fzWaitDone, 0), fzS(fzUnlock, 0), fzS(fzLockDone, 1)),
	"misuse_without_lock": fzEncode(detect.Off,
		fzS(fzWait, 0), fzS(fzSignal, 1), fzS(fzBroadcast, 2), fzS(fzWaitLong, 0), fzS(fzWaitZero, 1), fzS(fzWaitDone, 2),
		fzS(fzUnlock, 0), fzS(fzLock, 1), fzS(fzUnlock, 2), fzS(fzSignal, 0), fzS(fzUnlock, 1)),
	"queued_lockers_and_waiters": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzLock, 1), fzS(fzLockCtx, 2), fzS(fzWait, 0), fzS(fzCancel, 2), fzS(fzSignal, 1),
		fzS(fzLock, 2), fzS(fzUnlock, 1), fzS(fzWaitLong, 0), fzS(fzSignal, 2), fzS(fzUnlock, 2), fzS(fzUnlock, 0)),
	"reentrant_wait_restores_holds": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzLock, 0), fzS(fzTryLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzTryLock, 2),
		fzS(fzSignal, 1), fzS(fzUnlock, 1), fzS(fzUnlock, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 0)),
	"all_wait_then_drain": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWaitCtx, 1), fzS(fzLock, 2), fzS(fzWaitLong, 2)),
	"lockctx_cancel_queue": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzLockCtx, 1), fzS(fzLockCtx, 2), fzS(fzCancel, 1), fzS(fzUnlock, 0), fzS(fzCancel, 2),
		fzS(fzUnlock, 2), fzS(fzTryLock, 1), fzS(fzUnlock, 1)),
	"broadcast_with_lockers_queued": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWait, 1), fzS(fzLock, 2), fzS(fzLock, 0),
		fzS(fzBroadcast, 2), fzS(fzUnlock, 2), fzS(fzUnlock, 0), fzS(fzSignal, 1), fzS(fzUnlock, 1)),
	"ping_pong": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzSignal, 1), fzS(fzWait, 1), fzS(fzSignal, 0),
		fzS(fzWait, 0), fzS(fzSignal, 1), fzS(fzWaitCtx, 1), fzS(fzSignal, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 1)),
}

var fzWriteSeeds = flag.Bool("fuzzseeds.write", false, "rewrite the fuzz seed corpus under testdata/fuzz")

// TestFuzzCondSeeds checks that the committed seed corpus is the one
// fzCondSeeds describes (rewriting it with -fuzzseeds.write); plain go test
// then runs every seed through each fuzz target.
func TestFuzzCondSeeds(t *testing.T) {
	for _, k := range []fzKind{fzKindSyncMutex, fzKindMutex, fzKindMonitor} {
		fzCheckSeeds(t, k.target, fzCondSeeds)
	}
}

func fzCheckSeeds(t *testing.T, target string, seeds map[string][]byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	for name, data := range seeds {
		path := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *fzWriteSeeds {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "seed %s (run go test ./condvar -run TestFuzzCondSeeds -fuzzseeds.write to write it)", path)
		require.Equal(t, want, string(got), "seed %s is stale (run go test ./condvar -run TestFuzzCondSeeds -fuzzseeds.write)", path)
	}
}
