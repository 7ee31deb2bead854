package deadlock_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/deadlock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(restoring{m}) }

// restoring runs the tests and examples, then puts back Opts and the
// detector's configuration, which the examples, as programs do, set
// without restoring.
type restoring struct{ m *testing.M }

func (r restoring) Run() int {
	saved := deadlock.Opts
	defer func() {
		deadlock.Unapply()
		deadlock.Opts = saved
	}()
	return r.m.Run()
}
