package detect_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// internalFrame reports whether a function name belongs to the detector,
// the locks or the runtime: frames that reports must trim.
func internalFrame(fn string) bool {
	for _, p := range []string{
		"runtime.",
		"github.com/locksmith-go/locksmith/internal/",
		"github.com/locksmith-go/locksmith/detect.",
		"github.com/locksmith-go/locksmith/mutex.",
		"github.com/locksmith-go/locksmith/monitor.",
		"github.com/locksmith-go/locksmith/condvar.",
	} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}

// checkStacks checks that every step of r has a stack (unless allowEmpty)
// with the test's own file:line frames and none of the trimmed ones, and
// that String prints them.
func checkStacks(t *testing.T, r *detect.Report, allowEmpty bool) {
	t.Helper()
	s := r.String()
	for i, st := range r.Steps {
		if len(st.Stack) == 0 && allowEmpty {
			continue
		}
		site, ok := detecttest.OwnFrame(st.Stack, ownPrefix)
		require.True(t, ok, "step %d: no frame of the test in %v", i, st.Stack)
		assert.Regexp(t, `_test\.go:\d+$`, site)
		assert.Contains(t, s, site[strings.LastIndex(site, "/")+1:], "String prints the frame")
		for _, f := range st.Stack {
			assert.False(t, internalFrame(f.Function), "step %d: frame %s not trimmed", i, f.Function)
			assert.NotEmpty(t, f.File)
			assert.Positive(t, f.Line)
		}
	}
	for _, line := range strings.Split(s, "\n") {
		fn := strings.TrimSpace(line)
		assert.False(t, internalFrame(fn), "String prints a trimmed frame: %q", line)
	}
}

// TestReportStringDeadlock checks the jstack-like format: every goroutine
// as "goroutine N", each lock by its SetName name with type and address,
// and each goroutine's stack as file:line frames of the test, trimmed of
// the detector's, the locks' and the runtime's own frames.
func TestReportStringDeadlock(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	a := detecttest.Named("mutex", "accounts").(*mutex.Mutex)
	b := detecttest.Named("monitor", "ledger").(*monitor.Monitor)
	other := halfCycle(t, a, b)
	v := testutil.Catch(a.Lock)
	b.Unlock()
	require.Nil(t, other.Wait(t))
	de := detecttest.DeadlockError(t, v)
	require.Len(t, rec.All(), 1)
	r := de.Report
	me := testutil.GoroutineID()
	s := r.String()
	t.Logf("report:\n%s", s)

	assert.True(t, strings.HasPrefix(s, "Found one locksmith deadlock: accounts, ledger\n=============================\n"), s)
	for _, want := range []string{
		fmt.Sprintf("goroutine %d:\n  holds \"ledger\" (*monitor.Monitor 0x", me),
		"  waiting to lock \"accounts\" (*mutex.Mutex 0x",
		fmt.Sprintf("  which is held by goroutine %d\n", other.G),
		fmt.Sprintf("goroutine %d:\n  holds \"accounts\" (*mutex.Mutex 0x", other.G),
		"  waiting to lock \"ledger\" (*monitor.Monitor 0x",
		fmt.Sprintf("  which is held by goroutine %d\n", me),
		"Stacks of the goroutines listed above:",
	} {
		assert.Contains(t, s, want)
	}
	assert.Regexp(t, `(?m)^\tgithub.com/locksmith-go/locksmith/detect_test\.TestReportStringDeadlock\n\t\t\S+/report_test\.go:\d+$`, s)
	checkStacks(t, r, false)
	assert.Equal(t, fmt.Sprintf("detect: deadlock: goroutine %d waits for accounts held by goroutine %d; goroutine %d waits for ledger held by goroutine %d",
		me, other.G, other.G, me), de.Error())
	assert.Equal(t, fmt.Sprintf("%#x", r.Steps[0].WaitsFor.Addr), fmt.Sprintf("%p", a))
}

// TestReportStringUnnamed: an unnamed lock is shown by type and address,
// plus, once Order mode has seen it locked, the site of its first Lock.
func TestReportStringUnnamed(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	var a, b mutex.Mutex
	a.Lock()
	b.Lock() // first lock of b: this line
	_, file, line := testutil.CallerLine()
	b.Unlock()
	a.Unlock()
	lockPair(&b, &a)
	require.Len(t, rec.All(), 1, "%s", rec)
	r := rec.All()[0]
	s := r.String()
	t.Logf("report:\n%s", s)
	bInfo := r.Steps[len(r.Steps)-1].Holds
	require.NotNil(t, bInfo)
	assert.Empty(t, bInfo.Name)
	assert.Equal(t, "*mutex.Mutex", bInfo.Type)
	assert.Equal(t, fmt.Sprintf("%s:%d", file, line-1), bInfo.FirstLocked)
	assert.Contains(t, s, fmt.Sprintf("*mutex.Mutex %p first locked at %s:%d", &b, file, line-1))
	checkStacks(t, r, false)
	for _, want := range []string{
		fmt.Sprintf("WARNING: possible circular locking dependency detected: *mutex.Mutex %p (first locked at %s:%d), *mutex.Mutex %p (first locked at %s:%d)\n",
			&a, filepath.Base(file), line-2, &b, filepath.Base(file), line-1),
		fmt.Sprintf("goroutine %d is trying to acquire lock:\n", testutil.GoroutineID()),
		"but it already holds lock:\n",
		"which lock already depends on the new lock.\n",
		"the existing dependency chain is:\n",
		"-> #0 ", "-> #1 ", "first seen in goroutine ", "now, in goroutine ",
		" possible unsafe locking scenario:\n",
		fmt.Sprintf("   path 1: lock(%p); lock(%p); at %s:%d\n", &a, &b, file, line-1),
		fmt.Sprintf("   path 2: lock(%p); lock(%p); at ", &b, &a),
		"*** DEADLOCK if these paths run at the same time in different goroutines ***",
	} {
		assert.Contains(t, s, want)
	}
}

// TestSetName: only locksmith locks can be named; a later name replaces
// an earlier one.
func TestSetName(t *testing.T) {
	err, ok := testutil.Catch(func() { detect.SetName(new(sync.Mutex), "x") }).(error)
	require.True(t, ok, "SetName of a sync.Mutex: want an error panic")
	assert.ErrorIs(t, err, detect.ErrNotLocksmithLock)
	assert.EqualError(t, err, "detect: SetName(*sync.Mutex): not a locksmith lock")
	rec := detecttest.Configure(t, detect.WithMode(detect.Order))
	a, b := detecttest.Named("mutex", "first"), detecttest.Named("mutex", "b")
	detect.SetName(a, "second")
	lockPair(a, b)
	lockPair(b, a)
	require.Len(t, rec.All(), 1)
	s := rec.All()[0].String()
	assert.Contains(t, s, `"second" (*mutex.Mutex`)
	assert.NotContains(t, s, `"first"`)
	assert.Contains(t, s, "lock(second); lock(b);")
}

// TestDumpAndDOT checks Dump and WriteDOT with one goroutine parked on a
// named Mutex held by the test, which also holds a named Monitor twice and
// an unnamed Mutex, after an order a -> mu has been recorded.
func TestDumpAndDOT(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		detecttest.Configure(t, detect.WithMode(detect.Off))
		var buf bytes.Buffer
		detect.Dump(&buf)
		assert.Equal(t, "locksmith detector (mode off)\ndetection is off: nothing is tracked\n", buf.String())
	})
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			detecttest.Configure(t, detect.WithMode(mode))
			mu := detecttest.Named("mutex", "mu").(*mutex.Mutex)
			mon := detecttest.Named("monitor", "mon").(*monitor.Monitor)
			var plain mutex.Mutex
			me := testutil.GoroutineID()
			lockPair(mon, mu) // the order mon -> mu
			mon.Lock()
			mon.Lock()
			mu.Lock()
			plain.Lock()
			w := testutil.Spawn(func() {
				mu.Lock()
				mu.Unlock()
			})
			detecttest.WaitParked(t, mu, w.ID(t))

			var buf bytes.Buffer
			detect.Dump(&buf)
			d := buf.String()
			t.Logf("Dump:\n%s", d)
			assert.True(t, strings.HasPrefix(d, fmt.Sprintf("locksmith detector (mode %s)\n\nblocked goroutines: 1\n", mode)), d)
			assert.Regexp(t, fmt.Sprintf(`(?m)^  goroutine %d waiting \S+ to lock "mu" \(\*mutex\.Mutex 0x[0-9a-f]+\), held by goroutine %d$`, w.G, me), d)
			if mode == detect.Order {
				// Other goroutines may be listed too: those that exited
				// holding a lock in earlier tests hold it for good.
				assert.Contains(t, d, "\nheld locks:\n")
				assert.Contains(t, d, fmt.Sprintf("\n  goroutine %d holds:\n", me))
				assert.Regexp(t, `(?m)^    "mon" \(\*monitor\.Monitor 0x[0-9a-f]+\) \(hold count 2\)$`, d)
				assert.Regexp(t, `(?m)^    "mu" \(\*mutex\.Mutex 0x[0-9a-f]+\) \(hold count 1\)$`, d)
				assert.Regexp(t, fmt.Sprintf(`(?m)^    \*mutex\.Mutex %p first locked at \S+/report_test\.go:\d+ \(hold count 1\)$`, &plain), d)
			} else {
				assert.NotContains(t, d, "held locks:")
			}

			buf.Reset()
			require.NoError(t, detect.WriteDOT(&buf))
			dot := buf.String()
			t.Logf("DOT:\n%s", dot)
			checkDOT(t, dot)
			muID, monID := detect.LockID(mu), detect.LockID(mon)
			assert.Regexp(t, fmt.Sprintf(`(?m)^\tL%d \[label="\\"mu\\" \(\*mutex\.Mutex 0x[0-9a-f]+\)"\];$`, muID), dot)
			assert.Contains(t, dot, fmt.Sprintf("\tG%d [shape=ellipse,label=\"goroutine %d\"];\n", w.G, w.G))
			assert.Contains(t, dot, fmt.Sprintf("\tG%d [shape=ellipse,label=\"goroutine %d\"];\n", me, me))
			assert.Contains(t, dot, fmt.Sprintf("\tG%d -> L%d [style=dashed,label=\"waits\"];\n", w.G, muID))
			assert.Contains(t, dot, fmt.Sprintf("\tL%d -> G%d [style=bold,label=\"held by\"];\n", muID, me))
			if mode == detect.Order {
				assert.Regexp(t, fmt.Sprintf(`(?m)^\tL%d \[label="\\"mon\\" \(\*monitor\.Monitor 0x[0-9a-f]+\)"\];$`, monID), dot)
				assert.Contains(t, dot, fmt.Sprintf("\tL%d -> L%d;\n", monID, muID), "the order edge")
			} else {
				assert.NotContains(t, dot, fmt.Sprintf("\tL%d -> L%d;\n", monID, muID), "no order graph in Cycles mode")
			}

			plain.Unlock()
			mu.Unlock()
			mon.Unlock()
			mon.Unlock()
			require.Nil(t, w.Wait(t))
			buf.Reset()
			detect.Dump(&buf)
			assert.Contains(t, buf.String(), "blocked goroutines: 0\n")
		})
	}
}

// checkDOT checks that dot is one well-formed digraph: balanced braces and
// quotes, every statement terminated, every edge between declared nodes.
func checkDOT(t *testing.T, dot string) {
	t.Helper()
	require.True(t, strings.HasPrefix(dot, "digraph locksmith {\n"), dot)
	require.True(t, strings.HasSuffix(dot, "}\n"), dot)
	declared := map[string]bool{}
	nodeRe := regexp.MustCompile(`^\t([LG]\d+) \[(.*)\];$`)
	edgeRe := regexp.MustCompile(`^\t([LG]\d+) -> ([LG]\d+)( \[.*\])?;$`)
	lines := strings.Split(strings.TrimSuffix(dot, "}\n"), "\n")
	var edges [][2]string
	for _, line := range lines[1:] {
		if line == "" {
			continue
		}
		if m := edgeRe.FindStringSubmatch(line); m != nil {
			edges = append(edges, [2]string{m[1], m[2]})
			continue
		}
		if m := nodeRe.FindStringSubmatch(line); m != nil {
			declared[m[1]] = true
			// Quotes inside a label are escaped.
			inner := strings.ReplaceAll(m[2], `\"`, "")
			assert.Equal(t, 0, strings.Count(inner, `"`)%2, "unbalanced quotes: %q", line)
			continue
		}
		if strings.HasPrefix(line, "\trankdir=") || strings.HasPrefix(line, "\tnode [") {
			continue
		}
		t.Errorf("unexpected DOT line %q", line)
	}
	for _, e := range edges {
		assert.True(t, declared[e[0]] && declared[e[1]], "edge %v between declared nodes", e)
	}
}

// TestDumpHoldCountAcrossModeSwitches: the hold count Dump shows for a
// Monitor is its real one whatever happened while Order mode was off:
// re-entries and releases then count as much as any.
func TestDumpHoldCountAcrossModeSwitches(t *testing.T) {
	holdCount := func(t *testing.T) string {
		var buf bytes.Buffer
		detect.Dump(&buf)
		m := regexp.MustCompile(`"mon" \(\*monitor\.Monitor 0x[0-9a-f]+\) \(hold count (\d+)\)`).FindStringSubmatch(buf.String())
		require.NotNil(t, m, "%s", buf.String())
		return m[1]
	}
	cycles := func() func() { return detect.Configure(detect.WithMode(detect.Cycles)) }

	t.Run("released while off, retaken", func(t *testing.T) {
		detecttest.Configure(t, detect.WithMode(detect.Order))
		mon := detecttest.Named("monitor", "mon")
		mon.Lock()
		mon.Lock()
		restore := cycles()
		mon.Unlock()
		mon.Unlock()
		restore()
		mon.Lock()
		defer mon.Unlock()
		assert.Equal(t, "1", holdCount(t))
	})
	t.Run("re-entered while off", func(t *testing.T) {
		detecttest.Configure(t, detect.WithMode(detect.Cycles))
		mon := detecttest.Named("monitor", "mon")
		release := detecttest.Hold(mon, 3)
		defer release()
		defer detect.Configure(detect.WithMode(detect.Order))()
		assert.Equal(t, "3", holdCount(t))
	})
	t.Run("partly released while off", func(t *testing.T) {
		detecttest.Configure(t, detect.WithMode(detect.Order))
		mon := detecttest.Named("monitor", "mon")
		release := detecttest.Hold(mon, 3)
		restore := cycles()
		mon.Unlock()
		restore()
		assert.Equal(t, "2", holdCount(t))
		mon.Lock()
		assert.Equal(t, "3", holdCount(t))
		release()
	})
}
