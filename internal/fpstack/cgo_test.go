//go:build cgo

package fpstack_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/fpstack/internal/cgocall"
)

// TestCgoCallback takes a stack in Go called back from C called from Go.
// The frame pointer that the callback's entry saved is the system
// stack's, where the C frames run: the walk must not follow it, and the
// stack recorded must be runtime.Callers', down through the C call to the
// Go frames that made it.
func TestCgoCallback(t *testing.T) {
	var s stacks
	cgocall.Through(func() { s = capture(0) })
	check(t, s, "capture", "TestCgoCallback.func1", "TestCgoCallback")
}
