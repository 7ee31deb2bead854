package monitor_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveness is the one generous deadline (see testutil).
const liveness = testutil.Liveness

func goroutineID() int64 { return testutil.GoroutineID() }

func catch(f func()) any { return testutil.Catch(f) }

// mustPanicErr runs f, requires that it panics with an error, and returns it.
func mustPanicErr(t testing.TB, f func()) error {
	t.Helper()
	v := catch(f)
	require.NotNil(t, v, "expected a panic")
	err, ok := v.(error)
	require.Truef(t, ok, "panic value %#v (%T) is not an error", v, v)
	return err
}

func onOther(t testing.TB, f func()) (v any, id int64) {
	t.Helper()
	return testutil.OnOther(t, f)
}

func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	return testutil.Await(t, ch, what)
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testutil.WaitFor(t, what, cond)
}

func forEachMode(t *testing.T, f func(t *testing.T)) { testutil.ForEachMode(t, f) }
