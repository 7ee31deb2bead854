//go:build go1.25

// testing/synctest.Test is Go 1.25; older toolchains skip this file.

package condvar_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// A nested-monitor lockout inside a bubble, on a lock and a Cond of the
// bubble, with Cond waits watched (a wait timeout is set), fails at once
// with synctest's "all goroutines in bubble are blocked": the Cond waiter
// holds a across its wait, and the bubble's main goroutine, which would
// signal, waits for a. The registration of the Cond wait neither keeps the
// bubble busy nor hides the deadlock. It runs in a child process, since
// synctest reports the deadlock by panicking the test.
func TestSynctestCondLockoutFailsAtOnce(t *testing.T) {
	if os.Getenv("LOCKSMITH_COND_LOCKOUT_CHILD") == "1" {
		synctest.Test(t, func(t *testing.T) {
			defer detect.Configure(detect.WithMode(detect.Cycles), detect.WithWaitTimeout(time.Minute))()
			var a, cm mutex.Mutex
			c := condvar.New(&cm)
			ready := false // guarded by cm
			go func() {
				a.Lock()
				defer a.Unlock()
				cm.Lock()
				for !ready {
					c.Wait()
				}
				cm.Unlock()
			}()
			synctest.Wait()
			a.Lock() // the signaller needs a: a lockout
			cm.Lock()
			ready = true
			c.Signal()
			cm.Unlock()
			a.Unlock()
		})
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSynctestCondLockoutFailsAtOnce$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), "LOCKSMITH_COND_LOCKOUT_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung instead of failing:\n%s", out)
	require.Error(t, err, "the child's locked-out bubble did not fail")
	assert.Contains(t, string(out), "all goroutines in bubble are blocked")
}
