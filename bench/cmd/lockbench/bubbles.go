//go:build go1.25

package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/stress"
)

// bubblesSupported reports whether this build can run the soak's bubble
// phases (testing/synctest needs go1.25).
const bubblesSupported = true

// runWithBubbles runs stress.Run with cfg.Bubble making testing/synctest
// bubbles, which share the bubble workload's locks with goroutines outside
// them. synctest.Test needs a *testing.T, and a T is only made by the
// testing package's runner, so the stress run is the one test of a
// runner started here, in this ordinary binary (no go test involved).
// The runner's own output (its "PASS", or a failed test's log) is
// returned. A bubble whose goroutines all block makes synctest.Test panic
// ("deadlock: all goroutines in bubble are blocked"), which the runner
// reports and re-raises, and a send into a bubble from outside is a fatal
// error: either ends the process with the stacks and a non-zero status,
// which is what the phase looks for.
func runWithBubbles(ctx context.Context, cfg stress.Config) (stress.Result, string, error) {
	var (
		res    stress.Result
		runErr error
	)
	out, ok := runTest("LockbenchSoakBubbles", func(t *testing.T) {
		cfg.Bubble = func(body func()) {
			// t.Run may be called from several goroutines at once: each
			// bubble gets its own T.
			t.Run("bubble", func(t *testing.T) { synctest.Test(t, func(*testing.T) { body() }) })
		}
		res, runErr = stress.Run(ctx, cfg)
	})
	if runErr != nil {
		return res, out, runErr
	}
	if !ok {
		return res, out, errors.New("the bubble test failed")
	}
	return res, out, nil
}

// runStranding runs stress.Run with cfg.Strand making testing/synctest
// bubbles on the calling goroutine, whose readers deadlock on purpose
// behind the write lock it holds (see stress.Config.Strand). synctest
// marks the test failed for each deadlocked bubble, so the runner's
// verdict says nothing here: the stress result's anomalies do. Its
// stranded goroutines stay blocked until the process ends, which is why
// it is the soak's last phase.
func runStranding(ctx context.Context, cfg stress.Config) (stress.Result, string, error) {
	var (
		res    stress.Result
		runErr error
		ran    bool
	)
	out, _ := runTest("LockbenchSoakStranding", func(t *testing.T) {
		cfg.Strand = func(body func()) (v any) {
			defer func() { v = recover() }()
			synctest.Test(t, func(*testing.T) { body() })
			return nil
		}
		res, runErr = stress.Run(ctx, cfg)
		ran = true
	})
	if runErr != nil {
		return res, out, runErr
	}
	if !ran {
		return res, out, errors.New("the stranding test did not finish")
	}
	return res, out, nil
}

// testingFlags is the flag set testing.Init registers the test.* flags on
// in this process: a set of its own, so that they stay out of
// flag.CommandLine (lockbench's usage and the flag package's defaults),
// parsed empty so that the runner takes every default. Inside a test
// binary, where testing.Init has already run on flag.CommandLine, it is
// an empty set and the test binary's flags stay in force.
var testingFlags = sync.OnceValue(func() *flag.FlagSet {
	fs := flag.NewFlagSet("lockbench testing", flag.ContinueOnError)
	withCommandLine(fs, testing.Init)
	_ = fs.Parse(nil)
	return fs
})

// withCommandLine runs f with flag.CommandLine set to fs.
func withCommandLine(fs *flag.FlagSet, f func()) {
	saved := flag.CommandLine
	flag.CommandLine = fs
	defer func() { flag.CommandLine = saved }()
	f()
}

// runMu serialises runTest: it swaps process-wide state.
var runMu sync.Mutex

// runTest runs f as the one test of a testing runner (testing.MainStart
// and M.Run, which is what a test binary's generated main calls), and
// returns what the runner wrote to stdout and whether the test passed.
// The runner reads the test.* flags (testingFlags) and writes to
// os.Stdout, which is captured for the call.
//
// Why not testing.RunTests, which takes the tests alone: it runs them once
// per entry of the -test.cpu list, which only M.Run fills in, so called on
// its own it runs nothing. MainStart's signature is not covered by the Go
// 1 promise; this file is built from go1.25, and checked with go1.26.
func runTest(name string, f func(*testing.T)) (out string, ok bool) {
	runMu.Lock()
	defer runMu.Unlock()
	fs := testingFlags()
	r, w, err := os.Pipe()
	if err != nil {
		return err.Error(), false
	}
	var buf bytes.Buffer
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(&buf, r)
	}()
	stdout := os.Stdout
	os.Stdout = w
	if testing.Testing() {
		defer defaultTestFlags()()
	}
	var code int
	withCommandLine(fs, func() {
		m := testing.MainStart(testDeps{}, []testing.InternalTest{{Name: name, F: f}}, nil, nil, nil)
		code = m.Run()
	})
	os.Stdout = stdout
	w.Close()
	<-copied
	r.Close()
	return buf.String(), code == 0
}

// defaultTestFlags sets every test.* flag of a test binary to its default
// and returns a function that restores them. Inside a test binary (the
// lockbench tests run soaks) the runner started by runTest would
// otherwise take the go test command's flags as its own: -test.run naming
// another test, -test.count repeating the soak, and -test.testlogfile,
// which it would truncate and then close under the outer runner.
func defaultTestFlags() (restore func()) {
	saved := map[*flag.Flag]string{}
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "test.") && f.Value.String() != f.DefValue {
			saved[f] = f.Value.String()
			_ = f.Value.Set(f.DefValue)
		}
	})
	return func() {
		for f, v := range saved {
			_ = f.Value.Set(v)
		}
	}
}

// errNotSupported is testDeps' answer for what lockbench does not offer.
var errNotSupported = errors.New("lockbench: not supported by its test runner")

// corpusEntry is the testing package's fuzzing corpus entry type (an alias
// of an unnamed struct, so it can be spelled here).
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

// testDeps is what testing.MainStart needs from its caller, in the least
// form: no profiles, no coverage, no fuzzing, and every name matches (the
// runner has one test; inside a test binary, its -test.run pattern names
// the outer test, not this one).
type testDeps struct{}

func (testDeps) ImportPath() string                          { return "" }
func (testDeps) ModulePath() string                          { return "" }
func (testDeps) MatchString(pat, str string) (bool, error)   { return true, nil }
func (testDeps) SetPanicOnExit0(bool)                        {}
func (testDeps) StartCPUProfile(io.Writer) error             { return errNotSupported }
func (testDeps) StopCPUProfile()                             {}
func (testDeps) StartTestLog(io.Writer)                      {}
func (testDeps) StopTestLog() error                          { return nil }
func (testDeps) WriteProfileTo(string, io.Writer, int) error { return errNotSupported }
func (testDeps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errNotSupported
}
func (testDeps) RunFuzzWorker(func(corpusEntry) error) error { return errNotSupported }
func (testDeps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) {
	return nil, nil
}
func (testDeps) CheckCorpus([]any, []reflect.Type) error { return nil }
func (testDeps) ResetCoverage()                          {}
func (testDeps) SnapshotCoverage()                       {}
func (testDeps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
