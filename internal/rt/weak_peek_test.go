//go:build go1.24 && !purego

package rt

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestWeakLayoutChecked: the start-up check passes on this toolchain
// (else the scans fall back to Value), and writes nothing.
func TestWeakLayoutChecked(t *testing.T) {
	var out bytes.Buffer
	assert.True(t, setupWeak(&out))
	assert.Empty(t, out.String())
	assert.True(t, weakPeek)
}
