package detect_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestConfigure: each call starts from the configuration in force and
// changes only what its options name; restore puts back the configuration
// that was in force before its call, once.
func TestConfigure(t *testing.T) {
	if _, set := os.LookupEnv(detect.WaitTimeoutEnvVar); set {
		t.Skipf("%s is set: the default wait timeouts checked here do not hold", detect.WaitTimeoutEnvVar)
	}
	base := detect.CurrentConfig()
	t.Cleanup(func() { require.Equal(t, base, detect.CurrentConfig(), "restored") })
	nop := func(*detect.Report) {}

	r1 := detect.Configure(detect.WithMode(detect.Order))
	c1 := detect.CurrentConfig()
	assert.Equal(t, detect.Config{Mode: detect.Order, HasReporter: base.HasReporter, WaitTimeout: detect.DefaultTestWaitTimeout}, c1,
		"Order mode's default wait timeout")
	assert.Equal(t, detect.Order, detect.CurrentMode())

	r2 := detect.Configure(detect.WithReporter(nop))
	c2 := detect.CurrentConfig()
	assert.Equal(t, detect.Config{Mode: detect.Order, HasReporter: true, WaitTimeout: detect.DefaultTestWaitTimeout}, c2)

	r3 := detect.Configure(detect.WithWaitTimeout(5 * time.Second))
	c3 := detect.CurrentConfig()
	assert.Equal(t, detect.Config{Mode: detect.Order, HasReporter: true, WaitTimeout: 5 * time.Second}, c3)
	assert.Equal(t, 5*time.Second, detect.WatchdogTimeout())

	r4 := detect.Configure(detect.WithMode(detect.Cycles))
	c4 := detect.CurrentConfig()
	assert.Equal(t, detect.Config{Mode: detect.Cycles, HasReporter: true, WaitTimeout: 5 * time.Second}, c4,
		"a wait timeout set explicitly holds in Cycles mode too")

	r5 := detect.Configure(detect.WithMode(detect.Off))
	assert.Equal(t, detect.Config{Mode: detect.Off, HasReporter: true}, detect.CurrentConfig(), "Off has no watchdog")
	assert.Zero(t, detect.WatchdogTimeout())
	r5()
	assert.Equal(t, c4, detect.CurrentConfig())

	r6 := detect.Configure(detect.WithWaitTimeout(0), detect.WithReporter(nil))
	assert.Equal(t, detect.Config{Mode: detect.Cycles}, detect.CurrentConfig(), "0 turns the wait timeout off; nil reporter")
	r7 := detect.Configure() // no options: no change
	assert.Equal(t, detect.Config{Mode: detect.Cycles}, detect.CurrentConfig())
	r7()
	r6()
	assert.Equal(t, c4, detect.CurrentConfig())

	// Options apply in order: the last one naming a setting wins.
	r8 := detect.Configure(detect.WithMode(detect.Off), detect.WithMode(detect.Order))
	assert.Equal(t, detect.Order, detect.CurrentMode())
	r8()

	r4()
	assert.Equal(t, c3, detect.CurrentConfig())
	r3()
	assert.Equal(t, c2, detect.CurrentConfig())
	assert.Equal(t, detect.DefaultTestWaitTimeout, detect.WatchdogTimeout())
	r2()
	assert.Equal(t, c1, detect.CurrentConfig())
	r1()
	assert.Equal(t, base, detect.CurrentConfig())

	// A restore works once: called again later, it does nothing.
	r9 := detect.Configure(detect.WithMode(detect.Off))
	r1()
	r4()
	assert.Equal(t, detect.Off, detect.CurrentMode())
	r9()
}

// TestConfigureOverlappingRestores: restores made out of order (parallel
// tests) undo only their own call's changes, and never leave a stale
// configuration installed: once every call is restored, the configuration
// is what it was before the first.
func TestConfigureOverlappingRestores(t *testing.T) {
	// Cycles, not Off, under the layers: Off puts no wait timeout in force,
	// so the WithWaitTimeout layer below would not show.
	defer detect.Configure(detect.WithMode(detect.Cycles))()
	base := detect.CurrentConfig()
	nop := func(*detect.Report) {}

	r1 := detect.Configure(detect.WithMode(detect.Order))
	r2 := detect.Configure(detect.WithMode(detect.Off), detect.WithReporter(nop))
	r1() // out of order: r2's mode and reporter stay
	assert.Equal(t, detect.Config{Mode: detect.Off, HasReporter: true}, detect.CurrentConfig())
	r3 := detect.Configure(detect.WithWaitTimeout(time.Hour))
	r2() // r3's timeout stays; r2's changes go, and so does r1's
	assert.Equal(t, detect.Config{Mode: base.Mode, HasReporter: base.HasReporter, WaitTimeout: time.Hour}, detect.CurrentConfig())
	r3()
	assert.Equal(t, base, detect.CurrentConfig(), "a stale configuration left installed")

	// The same with the calls interleaved from goroutines, as parallel
	// tests make them: whatever the order, every restore done means the
	// base configuration.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := []detect.Mode{detect.Off, detect.Cycles, detect.Order}[i%3]
			restore := detect.Configure(detect.WithMode(m), detect.WithWaitTimeout(time.Duration(i+1)*time.Hour))
			defer restore()
			inner := detect.Configure(detect.WithReporter(nop))
			inner()
		}()
	}
	wg.Wait()
	assert.Equal(t, base, detect.CurrentConfig())
}

// TestConfigureDroppedRestoreFolds: a Configure whose restore function is
// dropped keeps its options in force, and is merged into the start-up
// configuration once the function is garbage, so that repeated calls do
// not pile up.
func TestConfigureDroppedRestoreFolds(t *testing.T) {
	base := detect.CurrentConfig()
	before := detect.Layers()
	for range 100 {
		detect.Configure(detect.WithMode(base.Mode)) // restore dropped
	}
	assert.Equal(t, base, detect.CurrentConfig())
	testutil.WaitFor(t, "dropped layers folded", func() bool {
		runtime.GC()
		return detect.Layers() <= before
	})
	assert.Equal(t, base, detect.CurrentConfig())
}

// TestZeroOptionChangesNothing: Configure with the zero Option, alone or
// among others, leaves every setting as the other options make it.
func TestZeroOptionChangesNothing(t *testing.T) {
	base := detect.CurrentConfig()
	restore := detect.Configure(detect.Option{})
	assert.Equal(t, base, detect.CurrentConfig(), "the zero Option alone")
	restore()
	other := detect.Off
	if detect.CurrentMode() == detect.Off {
		other = detect.Cycles
	}
	defer detect.Configure(detect.Option{}, detect.WithMode(other), detect.Option{})()
	assert.Equal(t, other, detect.CurrentMode(), "the zero Option around WithMode")
}

func TestConfigureRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		call func()
		msg  string
	}{
		{func() { detect.WithMode(detect.Mode(3)) }, "detect: WithMode(3): not Off, Cycles or Order"},
		{func() { detect.WithMode(detect.Mode(-1)) }, "detect: WithMode(-1): not Off, Cycles or Order"},
		{func() { detect.WithWaitTimeout(-time.Second) }, "detect: WithWaitTimeout(-1s): negative"},
	} {
		err, ok := testutil.Catch(tc.call).(error)
		require.True(t, ok, "%s: want an error panic", tc.msg)
		assert.ErrorIs(t, err, detect.ErrBadOption)
		assert.EqualError(t, err, tc.msg)
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want detect.Mode
		ok   bool
	}{
		{"off", detect.Off, true},
		{"cycles", detect.Cycles, true},
		{"order", detect.Order, true},
		{"Off", detect.Off, true},
		{"Cycles", detect.Cycles, true},
		{"Order", detect.Order, true},
		{"OFF", detect.Off, true},
		{"CYCLES", detect.Cycles, true},
		{"ORDER", detect.Order, true},
		{"", 0, false},
		{"oRdEr", 0, false},
		{"ORder", 0, false},
		{" order", 0, false},
		{"order ", 0, false},
		{"ordr", 0, false},
		{"on", 0, false},
		{"lockdep", 0, false},
	} {
		m, err := detect.ParseMode(tc.in)
		if !tc.ok {
			require.Error(t, err, "%q", tc.in)
			assert.Contains(t, err.Error(), "detect: unknown mode")
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", tc.in), "the message names the value")
			continue
		}
		require.NoError(t, err, "%q", tc.in)
		assert.Equal(t, tc.want, m)
		assert.Equal(t, strings.ToLower(tc.in), m.String(), "String is ParseMode's inverse")
	}
	assert.Equal(t, "detect.Mode(9)", detect.Mode(9).String())
	assert.Equal(t, "deadlock", detect.Deadlock.String())
	assert.Equal(t, "lock order", detect.LockOrder.String())
	assert.Equal(t, "wait timeout", detect.WaitTimeout.String())
}

// helperEnv, when set, makes TestHelperProcess act as a child process for
// the test named in it instead of skipping.
const helperEnv = "LOCKSMITH_DETECT_TEST_HELPER"

// runHelper runs this test binary again, running only TestHelperProcess
// with helperEnv=role and the extra environment, and returns its stdout and
// stderr. The child must succeed. An element of env that starts with
// "-test." is passed as a flag.
func runHelper(t *testing.T, role string, env ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runHelperErr(t, role, env...)
	require.NoError(t, err, "child %s:\nstdout:\n%s\nstderr:\n%s", role, stdout, stderr)
	return stdout, stderr
}

// runHelperErr is runHelper for a child that may fail: it returns the
// child's error (an *exec.ExitError for a non-zero exit status).
func runHelperErr(t *testing.T, role string, env ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	// The race detector's runtime sleeps a second at exit by default.
	cmd.Env = append(os.Environ(), helperEnv+"="+role, "GORACE=atexit_sleep_ms=0 "+os.Getenv("GORACE"))
	for _, e := range env {
		if strings.HasPrefix(e, "-test.") { // a flag, not a variable
			cmd.Args = append(cmd.Args, e)
			continue
		}
		if strings.HasSuffix(e, "=<unset>") {
			cmd.Env = slicesDeleteVar(cmd.Env, strings.TrimSuffix(e, "=<unset>"))
			continue
		}
		cmd.Env = append(cmd.Env, e)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	require.NoError(t, ctx.Err(), "child %s did not finish", role)
	return out.String(), errb.String(), err
}

func slicesDeleteVar(env []string, name string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// TestHelperProcess is not a test: it is the child of runHelper.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("child process helper")
	}
	switch role {
	case "mode":
		os.Stdout.WriteString("mode=" + detect.CurrentMode().String() + " reporter=" + detect.DefaultReporterName() + "\n")
	case "inversion":
		inversionChild(t, false)
	case "inversion-configured-panic":
		inversionChild(t, true)
	case "lock-once":
		var mu mutex.Mutex
		mu.Lock()
		mu.Unlock()
	case "no-lock":
	default:
		t.Fatalf("unknown helper role %q", role)
	}
}

// TestEnvVar: LOCKSMITH_DETECT sets the mode at start-up, in any of the
// accepted spellings (unset or empty: Order in a test binary, Cycles
// under the race detector); LOCKSMITH_DETECT_REPORT sets the default
// reporter (PanicReporter in a test binary otherwise).
func TestEnvVar(t *testing.T) {
	def := "mode=order reporter=panic"
	if detect.RaceBuild {
		def = "mode=cycles reporter=panic"
	}
	for _, tc := range []struct {
		value, report string
		want          string
	}{
		{"<unset>", "<unset>", def},
		{"", "", def},
		{"off", "<unset>", "mode=off reporter=panic"},
		{"order", "print", "mode=order reporter=print"},
		{"ORDER", "PANIC", "mode=order reporter=panic"},
		{"Order", "Print", "mode=order reporter=print"},
		{"Cycles", "panic", "mode=cycles reporter=panic"},
	} {
		t.Run(tc.value+"/"+tc.report, func(t *testing.T) {
			stdout, stderr := runHelper(t, "mode", detect.EnvVar+"="+tc.value, detect.ReportEnvVar+"="+tc.report)
			assert.Contains(t, stdout, tc.want+"\n")
			assert.NotContains(t, stderr, "LOCKSMITH_DETECT")
		})
	}
}

// TestEnvVarBadValue: a value the detector does not know stops the program
// at start-up, with a message naming the variable, the value and the valid
// values; it is never silently ignored.
func TestEnvVarBadValue(t *testing.T) {
	for _, tc := range []struct{ env, value, valid string }{
		{detect.EnvVar, "ordr", "want off, cycles or order"},
		{detect.EnvVar, "oRdEr", "want off, cycles or order"},
		{detect.EnvVar, " order", "want off, cycles or order"},
		{detect.EnvVar, "lockdep", "want off, cycles or order"},
		{detect.ReportEnvVar, "fail", "want panic or print"},
		{detect.ReportEnvVar, "pRINT", "want panic or print"},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			stdout, stderr, err := runHelperErr(t, "mode", tc.env+"="+tc.value)
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the child must fail\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.NotContains(t, stdout, "mode=", "the program did not get past start-up")
			assert.Contains(t, stderr, "panic: ")
			assert.Contains(t, stderr, fmt.Sprintf("detect: %s=%q", tc.env, tc.value))
			assert.Contains(t, stderr, tc.valid)
		})
	}
}

// TestConfigureConcurrentWithLocking: Configure, and restore, may run while
// other goroutines lock and unlock, block, and hold locks across mode
// changes. Under -race this proves the configuration race-free; the locks
// keep one consistent order, so nothing may be reported either, including
// by records of locks taken in Order mode and released while it was off.
func TestConfigureConcurrentWithLocking(t *testing.T) {
	rec := detecttest.Configure(t)
	var a mutex.Mutex
	var b monitor.Monitor
	var c mutex.Mutex
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				a.Lock()
				b.Lock()
				b.Lock()
				c.Lock()
				c.Unlock()
				b.Unlock()
				b.Unlock()
				a.Unlock()
				if c.TryLock() {
					c.Unlock()
				}
			}
		}()
	}
	modes := []detect.Mode{detect.Off, detect.Cycles, detect.Order}
	for i := range 300 {
		restore := detect.Configure(detect.WithMode(modes[i%3]), detect.WithWaitTimeout(time.Duration(i%2)*time.Hour))
		if i%5 == 0 {
			detect.Configure(detect.WithReporter(rec.Add), detect.WithReporter(rec.Add))()
		}
		detect.CurrentMode()
		restore()
	}
	close(stop)
	wg.Wait()
	assert.Empty(t, rec.All(), "%s", rec)
}

// TestTestLogRecheck: the recheck of go test's log is done once a
// goroutine other than the main one sees the log file, never while the
// file is missing before its time is up, and gives up when it is.
func TestTestLogRecheck(t *testing.T) {
	const main, other = 1, 2
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.txt")
	log := filepath.Join(dir, "testlog.txt")
	require.NoError(t, os.WriteFile(log, nil, 0o600))

	check, every := detect.LogRecheck(missing, time.Hour)
	for i := range 10 * every {
		require.False(t, check(main), "check %d, main goroutine, no log file", i)
		require.False(t, check(other), "check %d, no log file", i)
	}

	check, _ = detect.LogRecheck(log, time.Hour)
	assert.False(t, check(main), "the main goroutine does not look at the file")
	assert.True(t, check(other), "the log file exists")

	check, every = detect.LogRecheck(missing, -time.Second)
	for i := range every - 1 {
		require.False(t, check(other), "check %d: the clock is read every %d checks", i, every)
	}
	assert.True(t, check(main), "time is up: it gives up, also on the main goroutine")
}
