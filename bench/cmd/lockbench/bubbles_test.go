//go:build go1.25

package main

import (
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

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
