package mutex_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// liveness is the one generous deadline (see testutil).
const liveness = testutil.Liveness

func goroutineID() int64 { return testutil.GoroutineID() }

func catch(f func()) any { return testutil.Catch(f) }

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
