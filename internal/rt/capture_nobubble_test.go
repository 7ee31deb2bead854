//go:build !go1.25

package rt

import "testing"

// captureBubble returns what dump returns: Go 1.24 has no
// testing/synctest.Test (its GOEXPERIMENT=synctest is not captured).
func captureBubble(_ *testing.T, dump func() []byte) []byte { return dump() }
