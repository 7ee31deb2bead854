package monitor_test

// Model-based fuzzing of Monitor: re-entry, hold counts and the implicit
// condition (Wait, WaitTimeout, WaitContext, Notify, NotifyAll).
//
// An input is a detection mode (first byte) and then one operation per
// byte, each addressed to one of three worker goroutines. The test drives
// the workers one step at a time through channels: it tells a worker to
// run an operation and then waits until the reference model's prediction
// is observed, which is always one of two things: the operation returned
// (its result is checked), or the worker is parked (on the monitor's
// queue, seen with WaitQueueLen, or on its condition, seen with
// ImplicitWaiters). Nothing is timed: between steps every worker is idle or
// parked, so each step has exactly one correct outcome, except the order in
// which the waiters woken by one NotifyAll queue on the monitor, which the
// model leaves open (any of them may be first).
//
// After each step the model is compared with what the monitor reports
// (Locked, queue length, condition waiters) and with what each idle worker
// sees (Owned, HoldCount): a wait restores the hold count it found. Misuse
// (Unlock, Wait or Notify by a goroutine that does not hold the monitor)
// must panic with exactly the documented error and change nothing. A
// panic inside Do must leave the hold count as it was. Waits with a
// timeout use a timeout that never expires in a test (an hour) or zero;
// timeouts racing notifications are the stress tests' business
// (internal/stress). At the end the test cancels, notifies and unlocks
// until every worker is idle and the monitor free, then stops the workers
// and waits for them to exit.
//
// Run longer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzMonitor$' -fuzztime 5m ./monitor
//
// Go 1.26's fuzzing coordinator may end a run bounded by time with a
// spurious "context deadline exceeded" and no failing input (a known race,
// golang/go#75804, fixed in Go 1.27); bounding it by a count, such as
// -fuzztime 200000x, avoids that.
//
// The seed corpus is testdata/fuzz/FuzzMonitor/<seed name>;
// TestFuzzMonitorSeeds checks it against fzSeeds, and rewrites it with
// -fuzzseeds.write.

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
	"github.com/locksmith-go/locksmith/monitor"
)

func FuzzMonitor(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fzRun(t, data) })
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
	fzNotify                // Notify
	fzNotifyAll             // NotifyAll
	fzDoPanic               // Do(func() { panic(...) })
	fzNumOps
)

var fzOpNames = [fzNumOps]string{
	"Lock", "TryLock", "LockCtx", "LockDone", "Unlock", "Cancel",
	"Wait", "WaitLong", "WaitZero", "WaitCtx", "WaitDone", "Notify", "NotifyAll", "DoPanic",
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

// fzOut is what a worker's operation did.
type fzOut struct {
	w     int   // the worker
	v     any   // the recovered panic value, or nil
	err   error // LockContext, WaitContext
	ok    bool  // TryLock, WaitTimeout; Owned for a probe
	holds int   // HoldCount, for a probe
}

func (o fzOut) String() string {
	return fmt.Sprintf("{worker %d: panic=%v err=%v ok=%v holds=%d}", o.w, o.v, o.err, o.ok, o.holds)
}

// fzState is where a worker is between steps.
type fzState int

const (
	fzIdle   fzState = iota
	fzInLock         // parked in Lock or LockContext
	fzInCond         // parked on the condition
	fzRelock         // out of the condition (notified or cancelled), parked retaking the monitor
)

type fzWorker struct {
	cmd       chan func() fzOut
	g         int64 // goroutine ID
	st        fzState
	op        fzOp               // the operation it is parked in
	cancel    context.CancelFunc // of the pending LockContext or WaitContext
	cancelled bool
	holds     int  // the hold count its wait restores
	signalled bool // fzRelock: it left the condition by a notification, not a cancellation
}

// finish marks w idle and releases its context.
func (w *fzWorker) finish() {
	if w.cancel != nil {
		w.cancel()
	}
	*w = fzWorker{cmd: w.cmd, g: w.g}
}

// fzDriver runs one input: the workers, the monitor and the model.
type fzDriver struct {
	t      testing.TB
	m      *monitor.Monitor
	w      [fzWorkers + 1]fzWorker // the last is the janitor: used only to drain
	done   chan fzOut
	exited sync.WaitGroup

	// The model.
	owner int     // the worker holding the monitor, or -1
	holds int     // its hold count
	lockq [][]int // workers parked on the monitor, in queue order; a group's order is open
	condq []int   // workers parked on the condition, in FIFO order

	pending map[int]func(fzOut) // workers whose operation must return, with the check
	anyOf   []int               // one of these must take the monitor next (lockq[0])

	reports atomic.Int32
	trace   []string
}

// fzBoom is what fzDoPanic panics with.
var fzBoom = errors.New("boom")

func fzRun(t *testing.T, data []byte) {
	if len(data) == 0 {
		return
	}
	d := &fzDriver{t: t, m: new(monitor.Monitor), owner: -1,
		done: make(chan fzOut, fzWorkers+1), pending: map[int]func(fzOut){}}
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
	// The owner creates the implicit condition on first use: create it
	// now, so that ImplicitWaiters, which reads it, is ordered after (by
	// this step's channel receive).
	d.run(0, func() fzOut { d.m.Lock(); d.m.Notify(); d.m.Unlock(); return fzOut{} }, d.expectOK(0))
	d.collect()
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
	m, g := d.m, w.g
	holding := d.owner == k
	switch op {
	case fzLock, fzLockCtx:
		f := func() fzOut { m.Lock(); return fzOut{} }
		if op == fzLockCtx {
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() fzOut { return fzOut{err: m.LockContext(ctx)} }
		}
		switch {
		case holding: // re-entry
			d.holds++
			d.run(k, f, d.expectOK(k))
		case d.owner < 0:
			d.owner, d.holds = k, 1
			d.run(k, f, d.expectOK(k))
		default:
			w.st, w.op = fzInLock, op
			d.lockq = append(d.lockq, []int{k})
			d.park(k, f)
		}
	case fzTryLock:
		want := d.owner < 0 || holding
		if want {
			d.owner = k
			d.holds++
		}
		d.run(k, func() fzOut { return fzOut{ok: m.TryLock()} }, d.expectResult(k, want, nil))
	case fzLockDone:
		// Re-entry cannot block, so it succeeds whatever the context;
		// anyone else fails, even when the monitor is free.
		f := func() fzOut { return fzOut{err: m.LockContext(fzDoneCtx)} }
		if holding {
			d.holds++
			d.run(k, f, d.expectOK(k))
			return
		}
		d.run(k, f, d.expectResult(k, false, context.Canceled))
	case fzUnlock:
		f := func() fzOut { m.Unlock(); return fzOut{} }
		if !holding {
			d.run(k, f, d.expectPanic(k, monitor.ErrNotOwner, d.misuse(g, "unlock")))
			return
		}
		d.holds--
		d.run(k, f, d.expectOK(k))
		if d.holds == 0 {
			d.released()
		}
	case fzWait, fzWaitLong, fzWaitCtx, fzWaitZero, fzWaitDone:
		var f func() fzOut
		switch op {
		case fzWait:
			f = func() fzOut { m.Wait(); return fzOut{} }
		case fzWaitLong:
			f = func() fzOut { return fzOut{ok: m.WaitTimeout(fzLong)} }
		case fzWaitCtx:
			ctx, cancel := context.WithCancel(context.Background())
			w.cancel = cancel
			f = func() fzOut { return fzOut{err: m.WaitContext(ctx)} }
		case fzWaitZero:
			f = func() fzOut { return fzOut{ok: m.WaitTimeout(0)} }
		case fzWaitDone:
			f = func() fzOut { return fzOut{err: m.WaitContext(fzDoneCtx)} }
		}
		switch {
		case !holding:
			d.run(k, f, d.expectPanic(k, monitor.ErrNotOwner, d.misuse(g, "wait")))
		case op == fzWaitZero:
			// Returns false at once, without releasing the monitor.
			d.run(k, f, d.expectResult(k, false, nil))
		case op == fzWaitDone:
			// Returns ctx.Err() at once, without releasing the monitor.
			d.run(k, f, d.expectResult(k, false, context.Canceled))
		default:
			// Releases every hold; restores them before returning.
			w.st, w.op, w.holds = fzInCond, op, d.holds
			d.condq = append(d.condq, k)
			d.park(k, f)
			d.released()
		}
	case fzNotify, fzNotifyAll:
		f := func() fzOut { m.Notify(); return fzOut{} }
		if op == fzNotifyAll {
			f = func() fzOut { m.NotifyAll(); return fzOut{} }
		}
		if !holding {
			d.run(k, f, d.expectPanic(k, monitor.ErrNotOwner, d.misuse(g, "notify")))
			return
		}
		d.run(k, f, d.expectOK(k))
		var woken []int
		if op == fzNotify && len(d.condq) > 0 {
			woken, d.condq = d.condq[:1:1], d.condq[1:]
		} else if op == fzNotifyAll {
			woken, d.condq = d.condq, nil
		}
		if len(woken) > 0 {
			d.toLock(woken, true)
		}
	case fzDoPanic:
		if !holding && d.owner >= 0 {
			return // Do would park, and take and drop the monitor in one step when woken
		}
		holds := d.holds
		d.run(k, func() fzOut {
			defer func() {
				if v := recover(); v != fzBoom {
					panic(fmt.Sprintf("Do did not pass the panic on: recovered %v", v))
				}
			}()
			m.Do(func() {
				if h := m.HoldCount(); h != holds+1 {
					panic(fmt.Sprintf("HoldCount inside Do = %d, want %d", h, holds+1))
				}
				panic(fzBoom)
			})
			return fzOut{}
		}, d.expectOK(k))
	default:
		d.fatalf("unknown op %v", op)
	}
}

var fzDoneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// misuse returns the documented message of op by a goroutine g that does
// not hold the monitor.
func (d *fzDriver) misuse(g int64, op string) string {
	if d.owner < 0 {
		return fmt.Sprintf("monitor: %s of unlocked monitor (by goroutine %d)", op, g)
	}
	return fmt.Sprintf("monitor: %s by goroutine %d of monitor held by goroutine %d", op, g, d.w[d.owner].g)
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

// toLock moves workers woken from the condition to the monitor: they
// queue behind its waiters, or, if it is free, one of them takes it.
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

// settle waits until the monitor and its condition show the model's
// state: parked workers have parked, a released monitor is free.
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
	return fzView{locked: d.m.Locked(), queued: monitor.WaitQueueLen(d.m), waiting: monitor.ImplicitWaiters(d.m)}
}

// probe asks every idle worker whether it holds the monitor, and how often.
func (d *fzDriver) probe() {
	for k := range d.w {
		if d.w[k].st != fzIdle {
			continue
		}
		wantOwned := d.owner == k
		wantHolds := 0
		if wantOwned {
			wantHolds = d.holds
		}
		d.run(k, func() fzOut { return fzOut{ok: d.m.Owned(), holds: d.m.HoldCount()} }, func(o fzOut) {
			require.Nil(d.t, o.v, "probe of worker %d panicked\n%s", k, d)
			require.Equal(d.t, wantOwned, o.ok, "worker %d: Owned\n%s", k, d)
			require.Equal(d.t, wantHolds, o.holds, "worker %d: HoldCount\n%s", k, d)
		})
	}
	d.collect()
}

// drain cancels, notifies and unlocks until every worker is idle and the
// monitor is free. It uses the janitor when all the others wait on the
// condition.
func (d *fzDriver) drain() {
	d.trace = append(d.trace, "drain:")
	for range 10 * (fzMaxOps + fzWorkers) {
		if k := d.cancellable(); k >= 0 {
			d.step(fzCancel, k)
			continue
		}
		if d.owner >= 0 {
			if len(d.condq) > 0 {
				d.step(fzNotifyAll, d.owner)
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

// The seed corpus: named inputs that each exercise one rule.

func fzS(op fzOp, w int) fzStep { return fzStep{op, w} }

var fzSeeds = map[string][]byte{
	"notify_fifo": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWaitLong, 1), fzS(fzLock, 2),
		fzS(fzNotify, 2), fzS(fzNotify, 2), fzS(fzNotify, 2), fzS(fzUnlock, 2), fzS(fzUnlock, 0), fzS(fzUnlock, 1)),
	"notifyall_all": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWaitCtx, 1), fzS(fzLock, 2), fzS(fzWaitLong, 2),
		fzS(fzLock, 0), fzS(fzNotifyAll, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 1), fzS(fzUnlock, 2), fzS(fzUnlock, 0)),
	"cancel_wait_lock_held": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWaitCtx, 0), fzS(fzLock, 1), fzS(fzCancel, 0), fzS(fzNotify, 1), fzS(fzUnlock, 1), fzS(fzUnlock, 0)),
	"cancel_wait_lock_free": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzWaitCtx, 0), fzS(fzCancel, 0), fzS(fzUnlock, 0), fzS(fzLock, 1), fzS(fzUnlock, 1)),
	"notify_then_cancel_too_late": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzWaitCtx, 0), fzS(fzLock, 1), fzS(fzNotify, 1), fzS(fzCancel, 0), fzS(fzUnlock, 1), fzS(fzUnlock, 0)),
	"wait_zero_and_done_ctx": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWaitZero, 0), fzS(fzWaitDone, 0), fzS(fzUnlock, 0), fzS(fzLockDone, 1)),
	"misuse_without_lock": fzEncode(detect.Off,
		fzS(fzWait, 0), fzS(fzNotify, 1), fzS(fzNotifyAll, 2), fzS(fzWaitLong, 0), fzS(fzWaitZero, 1), fzS(fzWaitDone, 2),
		fzS(fzUnlock, 0), fzS(fzLock, 1), fzS(fzUnlock, 2), fzS(fzNotify, 0), fzS(fzUnlock, 1)),
	"queued_lockers_and_waiters": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzLock, 1), fzS(fzLockCtx, 2), fzS(fzWait, 0), fzS(fzCancel, 2), fzS(fzNotify, 1),
		fzS(fzLock, 2), fzS(fzUnlock, 1), fzS(fzWaitLong, 0), fzS(fzNotify, 2), fzS(fzUnlock, 2), fzS(fzUnlock, 0)),
	"reentrant_wait_restores_holds": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzLock, 0), fzS(fzTryLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzTryLock, 2),
		fzS(fzNotify, 1), fzS(fzUnlock, 1), fzS(fzUnlock, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 0)),
	"all_wait_then_drain": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWaitCtx, 1), fzS(fzLock, 2), fzS(fzWaitLong, 2)),
	"lockctx_cancel_queue": fzEncode(detect.Order,
		fzS(fzLock, 0), fzS(fzLockCtx, 1), fzS(fzLockCtx, 2), fzS(fzCancel, 1), fzS(fzUnlock, 0), fzS(fzCancel, 2),
		fzS(fzUnlock, 2), fzS(fzTryLock, 1), fzS(fzUnlock, 1)),
	"notifyall_with_lockers_queued": fzEncode(detect.Cycles,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzWait, 1), fzS(fzLock, 2), fzS(fzLock, 0),
		fzS(fzNotifyAll, 2), fzS(fzUnlock, 2), fzS(fzUnlock, 0), fzS(fzNotify, 1), fzS(fzUnlock, 1)),
	"do_panic_restores_holds": fzEncode(detect.Order,
		fzS(fzDoPanic, 0), fzS(fzLock, 0), fzS(fzDoPanic, 0), fzS(fzLock, 0), fzS(fzDoPanic, 0), fzS(fzDoPanic, 1),
		fzS(fzUnlock, 0), fzS(fzLock, 1), fzS(fzUnlock, 0), fzS(fzDoPanic, 2), fzS(fzUnlock, 1)),
	"reentry_ignores_done_context": fzEncode(detect.Cycles,
		fzS(fzLockDone, 0), fzS(fzLock, 0), fzS(fzLockDone, 0), fzS(fzLockCtx, 0), fzS(fzLockDone, 1),
		fzS(fzWaitCtx, 0), fzS(fzLock, 1), fzS(fzNotify, 1), fzS(fzUnlock, 1), fzS(fzUnlock, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 0)),
	"ping_pong": fzEncode(detect.Off,
		fzS(fzLock, 0), fzS(fzWait, 0), fzS(fzLock, 1), fzS(fzNotify, 1), fzS(fzWait, 1), fzS(fzNotify, 0),
		fzS(fzWait, 0), fzS(fzNotify, 1), fzS(fzWaitCtx, 1), fzS(fzNotify, 0), fzS(fzUnlock, 0), fzS(fzUnlock, 1)),
}

var fzWriteSeeds = flag.Bool("fuzzseeds.write", false, "rewrite the fuzz seed corpus under testdata/fuzz")

// TestFuzzMonitorSeeds checks that the committed seed corpus is the one
// fzSeeds describes (rewriting it with -fuzzseeds.write); plain go test
// then runs every seed through FuzzMonitor.
func TestFuzzMonitorSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzMonitor")
	for name, data := range fzSeeds {
		path := filepath.Join(dir, name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *fzWriteSeeds {
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(path, []byte(want), 0o644))
			continue
		}
		got, err := os.ReadFile(path)
		require.NoError(t, err, "seed %s (run go test ./monitor -run TestFuzzMonitorSeeds -fuzzseeds.write to write it)", path)
		require.Equal(t, want, string(got), "seed %s is stale (run go test ./monitor -run TestFuzzMonitorSeeds -fuzzseeds.write)", path)
	}
}
