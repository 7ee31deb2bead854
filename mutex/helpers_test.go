package mutex_test

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/detect"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveness is the one generous deadline for anything that must happen
// eventually. Nothing is timed against it; it only turns a hang into a
// failure.
const liveness = 10 * time.Second

// goroutineID parses the calling goroutine's ID from runtime.Stack,
// independently of the library's own source of identity.
func goroutineID() int64 {
	var buf [64]byte
	s := string(buf[:runtime.Stack(buf[:], false)])
	s = strings.TrimPrefix(s, "goroutine ")
	id, err := strconv.ParseInt(s[:strings.IndexByte(s, ' ')], 10, 64)
	if err != nil {
		panic(err)
	}
	return id
}

// catch runs f and returns what it panicked with, or nil.
func catch(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// onOther runs f on a new goroutine and returns f's panic value (nil if
// none) and the goroutine's ID.
func onOther(t testing.TB, f func()) (v any, id int64) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		id = goroutineID()
		v = catch(f)
	}()
	await(t, done, "goroutine running the misuse")
	return v, id
}

// await waits for ch to be closed or to deliver a value, failing the test
// after the liveness deadline.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(liveness)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("%s: nothing after %v", what, liveness)
		panic("unreachable")
	}
}

// waitFor polls cond, yielding the processor between looks, until it holds
// or the liveness deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached after %v", what, liveness)
		}
		runtime.Gosched()
	}
}

// forEachMode runs f once per detection mode, restoring the configuration
// after. The wait-timeout watchdog is kept off: no test here waits long.
func forEachMode(t *testing.T, f func(t *testing.T)) {
	for _, m := range []detect.Mode{detect.Off, detect.Cycles, detect.Order} {
		t.Run("detect="+m.String(), func(t *testing.T) {
			defer detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(0))()
			f(t)
		})
	}
}
