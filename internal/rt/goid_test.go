package rt

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVerifyFallsBackWithOneWarning(t *testing.T) {
	var out bytes.Buffer
	broken := func() int64 { return 42 } // what a moved field looks like: one wrong value everywhere
	require.False(t, verifyGoid(broken, SlowGoid, &out))
	assert.Contains(t, out.String(), "slow runtime.Stack path")
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")), "exactly one warning line")

	out.Reset()
	require.True(t, verifyGoid(SlowGoid, SlowGoid, &out))
	assert.Empty(t, out.String())
}
