//go:build gc && !purego && (amd64 || arm64) && go1.23

package fpstack

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWalkVerifiedOnThisRelease: the start-up check found the walk in
// agreement with runtime.Callers; if this fails, every stack is taken by
// runtime.Callers: see doc.go of internal/rt.
func TestWalkVerifiedOnThisRelease(t *testing.T) {
	assert.True(t, walkOK, "the frame-pointer walk disagrees with runtime.Callers on this Go release")
	got, want := walkSample(2)
	assert.Equal(t, want, got)
}

func TestVerifyWalkFallsBackWithOneWarning(t *testing.T) {
	var out bytes.Buffer
	broken := func(n int) ([]string, []string) { // what a moved g.stack looks like
		got, want := walkSample(n)
		return got[1:], want
	}
	require.False(t, verifyWalk(broken, &out))
	assert.Contains(t, out.String(), "recording stacks with runtime.Callers")
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "exactly one warning line")

	out.Reset()
	require.True(t, verifyWalk(walkSample, &out))
	assert.Empty(t, out.String())
}

// TestRecordFallsBackWhenWalkIsOff: with walkOK false, Record hands the
// stack to runtime.Callers, and Frames still gives runtime.Callers'.
func TestRecordFallsBackWhenWalkIsOff(t *testing.T) {
	walkOK = false
	defer func() { walkOK = true }()
	var rec [8]uintptr
	require.Positive(t, Record(0, rec[:]))
	assert.NotZero(t, rec[0]&logical, "runtime.Callers' PCs")
	got, want := walkSample(2)
	assert.Equal(t, want, got)
}
