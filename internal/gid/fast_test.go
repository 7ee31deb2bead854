//go:build !purego

package gid_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/internal/gid"
)

func TestFastPathVerifiedOnThisRelease(t *testing.T) {
	// goid supports the toolchain this module requires; if this fails, the
	// fallback is active and every lock is slow: update goid.
	assert.True(t, gid.Fast(), "goid disagrees with runtime.Stack on this Go release")
}

// With the purego tag Get parses runtime.Stack: see fast_purego_test.go.
