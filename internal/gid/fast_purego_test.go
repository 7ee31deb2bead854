//go:build purego

package gid_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/gid"
)

func TestPuregoTakesTheSlowPath(t *testing.T) {
	assert.False(t, gid.Fast(), "the purego tag reads no runtime internals")
	assert.Zero(t, gid.Offset())
}
