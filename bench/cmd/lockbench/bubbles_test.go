//go:build go1.25

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/mutex"
)

// TestRunTest: runTest runs a test function with a real *testing.T, in
// which synctest.Test works (a waiter on a bubble-local lock is durably
// blocked, so synctest.Wait returns), and tells a pass from a failure,
// inside a test binary as in lockbench itself. (A deadlocked bubble makes
// synctest.Test panic, which the runner re-raises: it ends the process,
// so it is not tried here.)
func TestRunTest(t *testing.T) {
	ran := false
	out, ok := runTest("Pass", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var mu mutex.Mutex
			mu.Lock()
			done := make(chan struct{})
			go func() {
				mu.Lock() // durably blocked until the Unlock below
				mu.Unlock()
				close(done)
			}()
			synctest.Wait()
			mu.Unlock()
			<-done
			ran = true
		})
	})
	assert.True(t, ok, out)
	assert.True(t, ran, "the test function ran")
	assert.Contains(t, out, "PASS")

	out, ok = runTest("Fail", func(t *testing.T) { t.Error("boom") })
	assert.False(t, ok)
	assert.Contains(t, out, "--- FAIL: Fail")
	assert.Contains(t, out, "boom")
}

const soakStrandingChild = "LOCKBENCH_SOAK_STRANDING_CHILD"

// TestSoakStranding runs the soak's last phase, which strands readers in
// bubbles deadlocked behind a writer outside, in a child process (its
// goroutines stay blocked for good, and synctest fails the child's test
// for each deadlocked bubble): no anomalies, and readers stranded.
func TestSoakStranding(t *testing.T) {
	if os.Getenv(soakStrandingChild) != "" {
		soakPhases = slices.DeleteFunc(slices.Clone(soakPhases), func(p soakPhase) bool { return !p.strand })
		code, stdout, stderr := runArgs(t, "-soak", "100ms")
		fmt.Printf("child: exit %d\n%s\n%s\n", code, stdout, stderr)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestSoakStranding$", "-test.timeout=10m")
	cmd.Env = append(os.Environ(), soakStrandingChild+"=1")
	out, _ := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
	s := string(out)
	assert.NotContains(t, s, "fatal error")
	assert.Contains(t, s, "child: exit 0\n", "child output:\n%s", s)
	assert.Contains(t, s, "soak: 100ms in detect mode order, with readers stranded in deadlocked synctest bubbles\n")
	assert.Contains(t, s, "stranding: readers of a synctest bubble deadlocked behind a writer outside it, which unlocks after\nstress: mode order")
	assert.Regexp(t, `readers stranded in deadlocked bubbles [1-9]`, s)
	assert.Contains(t, s, ", 0 anomalies")
}
