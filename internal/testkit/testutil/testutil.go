// Package testutil holds the helpers that the library's tests share:
// goroutine identity parsed independently of the library, goroutines
// started with their panic captured, stack snapshots, and waits bounded by
// one generous liveness deadline (which only turns a hang into a failure;
// nothing is timed against it). Of the library it imports only misuse,
// which imports nothing of it, so that internal/core's own tests can use
// it; the helpers that configure or observe the detector are in
// internal/testkit/detecttest.
package testutil

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/misuse"
)

// Liveness is the one generous deadline for anything that must happen
// eventually.
const Liveness = 20 * time.Second

// GoroutineID parses the calling goroutine's ID from runtime.Stack,
// independently of the library's own source of identity.
func GoroutineID() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// AllStacks returns the stacks of all goroutines, as runtime.Stack(buf,
// true) prints them, however long.
func AllStacks() string {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

// Catch runs f and returns what it panicked with, or nil.
func Catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// MisusePanic runs f, on a new goroutine if stranger, requires that it
// panics with a *misuse.Error made by the goroutine that ran f and
// matching its own Err, and returns the error and that goroutine's ID.
//
//lint:ignore ST1008 err is the panic value under test, not a failure of MisusePanic
func MisusePanic(t testing.TB, stranger bool, f func()) (err error, g int64) {
	t.Helper()
	var v any
	if stranger {
		v, g = OnOther(t, f)
	} else {
		v, g = Catch(f), GoroutineID()
	}
	require.NotNil(t, v, "expected a panic")
	err, ok := v.(error)
	require.Truef(t, ok, "panic value %#v is not an error", v)
	var me *misuse.Error
	require.Truef(t, errors.As(err, &me), "panic value %#v (%T) is not a *misuse.Error", v, v)
	assert.Equal(t, g, me.Goroutine, "the *misuse.Error's Goroutine")
	assert.ErrorIs(t, err, me.Err, "the *misuse.Error matches its Err")
	return err, g
}

// ErrorIsOnly asserts that err matches sentinel and none of others (which
// may include sentinel).
func ErrorIsOnly(t testing.TB, err, sentinel error, others ...error) {
	t.Helper()
	assert.ErrorIs(t, err, sentinel)
	for _, other := range others {
		if other != sentinel {
			assert.NotErrorIs(t, err, other)
		}
	}
}

// OnOtherOK runs f on a new goroutine, requires that it does not panic,
// and returns the goroutine's ID.
func OnOtherOK(t testing.TB, f func()) int64 {
	t.Helper()
	v, id := OnOther(t, f)
	require.Nil(t, v, "goroutine %d panicked", id)
	return id
}

// MustPanicErr runs f, requires that it panics with an error, and returns
// it.
func MustPanicErr(t testing.TB, f func()) error {
	t.Helper()
	v := Catch(f)
	require.NotNil(t, v, "expected a panic")
	err, ok := v.(error)
	require.Truef(t, ok, "panic value %#v (%T) is not an error", v, v)
	return err
}

// OnOther runs f on a new goroutine and returns f's panic value (nil if
// none) and the goroutine's ID.
func OnOther(t testing.TB, f func()) (v any, id int64) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		id = GoroutineID()
		v = Catch(f)
	}()
	Await(t, done, "goroutine running the misuse")
	return v, id
}

// Await waits for ch to be closed or to deliver a value, failing the test
// after the liveness deadline.
func Await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Liveness)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, Liveness)
		panic("unreachable")
	}
}

// WaitFor polls cond, yielding the processor between looks, until it holds
// or the liveness deadline passes.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %v", what, Liveness)
		}
		runtime.Gosched()
	}
}

// RWLock is the method set that mutex.RWMutex and monitor.RWMonitor
// share.
type RWLock interface {
	Lock()
	Unlock()
	RLock()
	RUnlock()
	TryLock() bool
	TryRLock() bool
	LockContext(context.Context) error
	RLockContext(context.Context) error
	Owned() bool
	ReadOwned() bool
	Locked() bool
	Readers() int
}

// Proc is a goroutine started by Spawn, with its ID and its panic value.
type Proc struct {
	G     int64         // the goroutine's ID; read after ID or Wait
	ready chan struct{} // closed once G is set
	done  chan struct{} // closed when f has returned or panicked
	v     any           // f's panic value; read after done
}

// Spawn runs f on a new goroutine, recovering any panic.
func Spawn(f func()) *Proc {
	p := &Proc{ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.G = GoroutineID()
		close(p.ready)
		p.v = Catch(f)
	}()
	return p
}

// ID waits for p to start and returns its goroutine ID.
func (p *Proc) ID(t testing.TB) int64 {
	t.Helper()
	Await(t, p.ready, "goroutine start")
	return p.G
}

// Wait waits for p to finish and returns its panic value.
func (p *Proc) Wait(t testing.TB) any {
	t.Helper()
	Await(t, p.done, "goroutine end")
	return p.v
}

// GoroutineDump returns the state (as in "goroutine 7 [select]:") and the
// stack of goroutine g, from one AllStacks snapshot.
func GoroutineDump(g int64) (state, stack string, ok bool) {
	head := "goroutine " + strconv.FormatInt(g, 10) + " ["
	for _, block := range strings.Split(AllStacks(), "\n\n") {
		if !strings.HasPrefix(block, head) {
			continue
		}
		rest := block[len(head):]
		end := strings.Index(rest, "]")
		if end < 0 {
			return "", block, true
		}
		return rest[:end], block, true
	}
	return "", "", false
}

// WaitState waits until goroutine g is blocked (neither running nor
// runnable) with frame on its stack.
func WaitState(t testing.TB, g int64, frame string) {
	t.Helper()
	WaitFor(t, fmt.Sprintf("goroutine %d blocked in %s", g, frame), func() bool {
		state, stack, ok := GoroutineDump(g)
		return ok && state != "running" && state != "runnable" && strings.Contains(stack, frame)
	})
}

// CallerLine returns the program counter, file and line of its caller.
func CallerLine() (pc uintptr, file string, line int) {
	pc, file, line, _ = runtime.Caller(1)
	return pc, file, line
}

// Usable checks, from another goroutine, that l is free and can be locked
// and unlocked.
func Usable(t testing.TB, l interface {
	sync.Locker
	TryLock() bool
	Locked() bool
}) {
	t.Helper()
	assert.False(t, l.Locked(), "still locked")
	OnOther(t, func() {
		if assert.True(t, l.TryLock(), "TryLock from another goroutine") {
			l.Unlock()
		}
	})
}

// RaceOrder runs cancel and act (an Unlock or a Signal, which the caller
// must make: it holds the lock) in an order that depends on round: cancel
// first, act first, or both at once, cancel from another goroutine. A
// cancellation takes effect on another goroutine anyway (context.AfterFunc,
// or the waiter noticing), so each order still races; the mix moves the
// odds.
//
// settle, if not nil, runs between cancel and act when cancel goes first:
// it waits for the cancellation to take effect, so that act certainly
// comes after it.
func RaceOrder(round int, cancel, settle, act func()) {
	switch round % 3 {
	case 0:
		cancel()
		if settle != nil {
			settle()
		}
		act()
	case 1:
		act()
		cancel()
	case 2:
		start, done := make(chan struct{}), make(chan struct{})
		go func() { <-start; cancel(); close(done) }()
		close(start)
		act()
		<-done
	}
}

// HeapBaseline returns the memory statistics after two collections, for
// RetainedMiB.
func HeapBaseline() runtime.MemStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms
}

// RetainedMiB returns how much more heap is in use, after collection, than
// at before (a HeapBaseline).
func RetainedMiB(before runtime.MemStats) float64 {
	after := HeapBaseline()
	return (float64(after.HeapInuse) - float64(before.HeapInuse)) / (1 << 20)
}
