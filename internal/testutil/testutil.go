// Package testutil holds the helpers that the test packages of mutex,
// monitor, condvar and detect share: goroutine identity parsed
// independently of the library, panic capture, and waits bounded by one
// generous liveness deadline (which only turns a hang into a failure;
// nothing is timed against it).
package testutil

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/stretchr/testify/require"
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

// ForEachMode runs f once per detection mode, restoring the configuration
// after. The wait-timeout watchdog is kept off.
func ForEachMode(t *testing.T, f func(t *testing.T)) {
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run("detect="+m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
			f(t)
		})
	}
}
