package fuzzmodel

// Model-based fuzzing of the read-write locks, shared by FuzzRWMutex and
// FuzzRWMonitor.
//
// An input is one operation per byte, each addressed to one of three
// worker goroutines. The driver runs one operation at a time and then
// waits until the reference model's prediction is observed: every
// operation the model says returns has returned (with the predicted
// result or panic sentinel), and every goroutine the model says waits is
// parked where the model says (the writer queue, the reader queue, or
// draining readers as the writer). Nothing is timed: between steps each
// worker is idle or parked, so each step has one correct outcome,
// including who goes next when a lock is released (writer preference, the
// queued readers admitted before the next writer, writers in FIFO order).
// After each step the model is compared with Locked and Readers, and with
// what each idle worker sees (Owned, ReadOwned, and for a reentrant lock
// the hold counts). At the end the driver cancels and releases until all
// workers are idle and the lock is free.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// RWFuzzLock is the lock under test and how to observe its queues.
type RWFuzzLock struct {
	Reentrant bool // RWMonitor: re-entry counted, upgrade refused with Upgrade
	New       func() testutil.RWLock
	// Queues returns the writers queued on the writer lock and the
	// readers parked behind a writer; Draining whether a writer waits for
	// readers to leave.
	Queues   func(testutil.RWLock) (writers, readers int)
	Draining func(testutil.RWLock) bool
	// Sentinels: Recursive (RWMutex's any re-entry; RWMonitor: none),
	// Upgrade (RWMonitor's Lock by a reader), NotOwner.
	Recursive, Upgrade, NotOwner error
	// Holds returns the caller's write and read hold counts (reentrant
	// locks only).
	Holds func(testutil.RWLock) (w, r int)
}

const rwfWorkers = 3

type rwfOp uint8

const (
	rwfLock rwfOp = iota
	rwfRLock
	rwfUnlock
	rwfRUnlock
	rwfTryLock
	rwfTryRLock
	rwfLockCtx
	rwfRLockCtx
	rwfCancel
	rwfNumOps
)

var rwfNames = [rwfNumOps]string{"Lock", "RLock", "Unlock", "RUnlock", "TryLock", "TryRLock", "LockCtx", "RLockCtx", "Cancel"}

type rwfOut struct {
	w   int
	v   any // panic value
	err error
	ok  bool
}

// where a parked worker waits, in the model.
const (
	rwfIdle = iota
	rwfWQueue
	rwfRQueue
	rwfDrain
)

type rwfWorker struct {
	cmd    chan func() rwfOut
	state  int
	ctx    bool               // the pending operation has a context
	cancel context.CancelFunc // of the pending operation
}

type rwfDriver struct {
	t    testing.TB
	spec RWFuzzLock
	l    testutil.RWLock
	w    [rwfWorkers]rwfWorker
	done chan rwfOut

	// The model.
	claim    int // the worker holding the writer lock, or -1
	draining bool
	wholds   int
	reads    [rwfWorkers]int
	wq, rq   []int

	expect  map[int]func(rwfOut) // workers whose pending operation must return, with its check
	cancels []context.CancelFunc // of contexts whose operation returned, to release after settle
	trace   []string
}

// RWFuzz runs one input against spec.
func RWFuzz(t *testing.T, spec RWFuzzLock, data []byte) {
	d := &rwfDriver{t: t, spec: spec, l: spec.New(), claim: -1, done: make(chan rwfOut, rwfWorkers), expect: map[int]func(rwfOut){}}
	defer time.AfterFunc(3*testutil.Liveness, func() { panic("rw fuzz input hung:\n" + d.String()) }).Stop()
	for k := range d.w {
		d.w[k].cmd = make(chan func() rwfOut)
		go func() {
			for f := range d.w[k].cmd {
				d.done <- f()
			}
		}()
	}
	defer func() {
		for k := range d.w {
			close(d.w[k].cmd)
		}
	}()
	if len(data) > 200 {
		data = data[:200]
	}
	for _, b := range data {
		op, k := rwfOp(b%byte(rwfNumOps)), int(b/byte(rwfNumOps))%rwfWorkers
		d.step(op, k)
	}
	d.finish()
}

func (d *rwfDriver) String() string { return "steps:\n\t" + strings.Join(d.trace, "\n\t") }

func (d *rwfDriver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), d)
}

func (d *rwfDriver) anyReaders() bool {
	for _, n := range d.reads {
		if n > 0 {
			return true
		}
	}
	return false
}

func (d *rwfDriver) nReaders() int {
	n := 0
	for _, r := range d.reads {
		if r > 0 {
			n++
		}
	}
	return n
}

// run sends f to worker k.
func (d *rwfDriver) run(k int, f func() rwfOut) {
	d.w[k].cmd <- func() rwfOut {
		o := rwfOut{w: k}
		func() {
			defer func() { o.v = recover() }()
			o = f()
			o.w = k
		}()
		o.w = k
		return o
	}
}

func (d *rwfDriver) complete(k int, check func(rwfOut)) {
	d.w[k].state = rwfIdle
	d.expect[k] = check
}

func wantOK(d *rwfDriver, what string) func(rwfOut) {
	return func(o rwfOut) {
		if o.v != nil || o.err != nil {
			d.fatalf("worker %d %s: want success, got panic %v err %v", o.w, what, o.v, o.err)
		}
	}
}

func wantBool(d *rwfDriver, what string, want bool) func(rwfOut) {
	return func(o rwfOut) {
		if o.v != nil || o.ok != want {
			d.fatalf("worker %d %s: want %v, got %v (panic %v)", o.w, what, want, o.ok, o.v)
		}
	}
}

func wantPanic(d *rwfDriver, what string, sentinel error) func(rwfOut) {
	return func(o rwfOut) {
		err, _ := o.v.(error)
		if err == nil || !errors.Is(err, sentinel) {
			d.fatalf("worker %d %s: want a panic matching %v, got %v", o.w, what, sentinel, o.v)
		}
	}
}

func wantErr(d *rwfDriver, what string, e error) func(rwfOut) {
	return func(o rwfOut) {
		if o.v != nil || !errors.Is(o.err, e) {
			d.fatalf("worker %d %s: want %v, got err %v panic %v", o.w, what, e, o.err, o.v)
		}
	}
}

func (d *rwfDriver) park(k, where int, ctx bool, cancel context.CancelFunc) {
	d.w[k].state, d.w[k].ctx, d.w[k].cancel = where, ctx, cancel
}

// release gives up the writer lock (Unlock of the last hold, or a
// cancelled drain): the queued readers are admitted, then the first queued
// writer takes the writer lock.
func (d *rwfDriver) release() {
	for _, r := range d.rq {
		d.reads[r] = 1
		d.complete(r, wantOK(d, "queued read"))
	}
	d.rq = nil
	d.claim, d.draining, d.wholds = -1, false, 0
	if len(d.wq) > 0 {
		n := d.wq[0]
		d.wq = d.wq[1:]
		d.claim = n
		if d.anyReaders() {
			d.draining = true
			d.w[n].state = rwfDrain
		} else {
			d.wholds = 1
			d.complete(n, wantOK(d, "queued write"))
		}
	}
}

func (d *rwfDriver) step(op rwfOp, k int) {
	wk := &d.w[k]
	if wk.state != rwfIdle && op != rwfCancel {
		return // parked: only Cancel addresses it
	}
	d.trace = append(d.trace, fmt.Sprintf("%s by worker %d", rwfNames[op], k))
	l, re := d.l, d.spec.Reentrant
	activeWriter := d.claim == k && !d.draining
	switch op {
	case rwfLock, rwfLockCtx:
		var ctx context.Context
		var cancel context.CancelFunc
		if op == rwfLockCtx {
			ctx, cancel = context.WithCancel(context.Background())
			d.run(k, func() rwfOut { return rwfOut{err: l.LockContext(ctx)} })
		} else {
			d.run(k, func() rwfOut { l.Lock(); return rwfOut{} })
		}
		switch {
		case activeWriter && re:
			d.wholds++
			d.complete(k, wantOK(d, "re-entrant Lock"))
		case activeWriter:
			d.complete(k, wantPanic(d, "recursive Lock", d.spec.Recursive))
		case d.reads[k] > 0 && re:
			d.complete(k, wantPanic(d, "upgrade", d.spec.Upgrade))
		case d.reads[k] > 0:
			d.complete(k, wantPanic(d, "upgrade", d.spec.Recursive))
		case d.claim == -1:
			d.claim = k
			if d.anyReaders() {
				d.draining = true
				d.park(k, rwfDrain, ctx != nil, cancel)
			} else {
				d.wholds = 1
				d.complete(k, wantOK(d, "Lock"))
			}
		default:
			d.wq = append(d.wq, k)
			d.park(k, rwfWQueue, ctx != nil, cancel)
		}
		if d.w[k].state == rwfIdle && cancel != nil {
			d.cancels = append(d.cancels, cancel) // once it has returned
		}
	case rwfRLock, rwfRLockCtx:
		var ctx context.Context
		var cancel context.CancelFunc
		if op == rwfRLockCtx {
			ctx, cancel = context.WithCancel(context.Background())
			d.run(k, func() rwfOut { return rwfOut{err: l.RLockContext(ctx)} })
		} else {
			d.run(k, func() rwfOut { l.RLock(); return rwfOut{} })
		}
		switch {
		case d.reads[k] > 0 && re:
			d.reads[k]++
			d.complete(k, wantOK(d, "re-entrant RLock"))
		case d.reads[k] > 0 || activeWriter && !re:
			d.complete(k, wantPanic(d, "recursive RLock", d.spec.Recursive))
		case activeWriter:
			d.reads[k] = 1
			d.complete(k, wantOK(d, "writer's RLock"))
		case d.claim != -1:
			d.rq = append(d.rq, k)
			d.park(k, rwfRQueue, ctx != nil, cancel)
		default:
			d.reads[k] = 1
			d.complete(k, wantOK(d, "RLock"))
		}
		if d.w[k].state == rwfIdle && cancel != nil {
			d.cancels = append(d.cancels, cancel) // once it has returned
		}
	case rwfUnlock:
		d.run(k, func() rwfOut { l.Unlock(); return rwfOut{} })
		switch {
		case !activeWriter:
			d.complete(k, wantPanic(d, "Unlock", d.spec.NotOwner))
		default:
			d.complete(k, wantOK(d, "Unlock"))
			if d.wholds--; d.wholds == 0 {
				d.release()
			}
		}
	case rwfRUnlock:
		d.run(k, func() rwfOut { l.RUnlock(); return rwfOut{} })
		if d.reads[k] == 0 {
			d.complete(k, wantPanic(d, "RUnlock", d.spec.NotOwner))
			break
		}
		d.complete(k, wantOK(d, "RUnlock"))
		if d.reads[k]--; d.reads[k] == 0 && d.draining && !d.anyReaders() {
			d.draining, d.wholds = false, 1
			d.complete(d.claim, wantOK(d, "drained Lock"))
		}
	case rwfTryLock:
		d.run(k, func() rwfOut { return rwfOut{ok: l.TryLock()} })
		switch {
		case activeWriter && re:
			d.wholds++
			d.complete(k, wantBool(d, "TryLock", true))
		case d.claim == -1 && !d.anyReaders():
			d.claim, d.wholds = k, 1
			d.complete(k, wantBool(d, "TryLock", true))
		default:
			d.complete(k, wantBool(d, "TryLock", false))
		}
	case rwfTryRLock:
		d.run(k, func() rwfOut { return rwfOut{ok: l.TryRLock()} })
		switch {
		case re && d.reads[k] > 0:
			d.reads[k]++
			d.complete(k, wantBool(d, "TryRLock", true))
		case re && activeWriter:
			d.reads[k] = 1
			d.complete(k, wantBool(d, "TryRLock", true))
		case d.reads[k] > 0 || d.claim != -1:
			d.complete(k, wantBool(d, "TryRLock", false))
		default:
			d.reads[k] = 1
			d.complete(k, wantBool(d, "TryRLock", true))
		}
	case rwfCancel:
		if wk.state == rwfIdle || !wk.ctx {
			d.trace = d.trace[:len(d.trace)-1]
			return
		}
		state := wk.state
		wk.cancel()
		d.complete(k, wantErr(d, "cancelled wait", context.Canceled))
		switch state {
		case rwfWQueue:
			d.wq = slices.DeleteFunc(d.wq, func(x int) bool { return x == k })
		case rwfRQueue:
			d.rq = slices.DeleteFunc(d.rq, func(x int) bool { return x == k })
		case rwfDrain:
			d.release()
		}
	}
	d.settle()
}

// settle waits for the predicted returns and parks, then compares.
func (d *rwfDriver) settle() {
	d.t.Helper()
	deadline := time.Now().Add(testutil.Liveness)
	for len(d.expect) > 0 {
		select {
		case o := <-d.done:
			check, ok := d.expect[o.w]
			if !ok {
				d.fatalf("worker %d returned unexpectedly: panic %v err %v ok %v", o.w, o.v, o.err, o.ok)
			}
			delete(d.expect, o.w)
			check(o)
		case <-time.After(time.Until(deadline)):
			d.fatalf("workers %v did not return", keys(d.expect))
		}
	}
	for _, c := range d.cancels {
		c()
	}
	d.cancels = d.cancels[:0]
	testutil.WaitFor(d.t, "parked as the model says", func() bool {
		w, r := d.spec.Queues(d.l)
		return w == len(d.wq) && r == len(d.rq) && d.spec.Draining(d.l) == d.draining
	})
	select {
	case o := <-d.done:
		d.fatalf("worker %d returned while the model has it parked: panic %v err %v", o.w, o.v, o.err)
	default:
	}
	if got, want := d.l.Locked(), d.claim != -1 && !d.draining; got != want {
		d.fatalf("Locked() = %v, model %v", got, want)
	}
	if got, want := d.l.Readers(), d.nReaders(); got != want {
		d.fatalf("Readers() = %d, model %d", got, want)
	}
	for k := range d.w {
		if d.w[k].state != rwfIdle {
			continue
		}
		d.run(k, func() rwfOut {
			ok := d.l.Owned() == (d.claim == k && !d.draining) && d.l.ReadOwned() == (d.reads[k] > 0)
			if ok && d.spec.Holds != nil {
				w, r := d.spec.Holds(d.l)
				wantW := 0
				if d.claim == k && !d.draining {
					wantW = d.wholds
				}
				ok = w == wantW && r == d.reads[k]
			}
			return rwfOut{ok: ok}
		})
		if o := <-d.done; !o.ok || o.v != nil {
			d.fatalf("worker %d sees a different state from the model's (panic %v)", k, o.v)
		}
	}
}

func keys(m map[int]func(rwfOut)) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// finish cancels and releases until every worker is idle and the lock
// free.
func (d *rwfDriver) finish() {
	for range 1000 {
		progress := false
		for k := range d.w {
			switch {
			case d.w[k].state != rwfIdle && d.w[k].ctx:
				d.step(rwfCancel, k)
				progress = true
			case d.w[k].state == rwfIdle && d.claim == k && !d.draining:
				d.step(rwfUnlock, k)
				progress = true
			case d.w[k].state == rwfIdle && d.reads[k] > 0:
				d.step(rwfRUnlock, k)
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	if d.claim != -1 || d.anyReaders() || len(d.wq)+len(d.rq) > 0 {
		d.fatalf("not drained: claim %d readers %v queues %v %v", d.claim, d.reads, d.wq, d.rq)
	}
	if d.l.Locked() || d.l.Readers() != 0 {
		d.fatalf("lock not free at the end")
	}
}
