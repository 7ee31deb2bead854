//go:build amd64 && gc && !race && !purego

package monitor

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
)

// fastLock is a Monitor for the fast-path suites that mutex and monitor
// share (only New is used).
var fastLock = locktest.Lock{Name: "monitor", New: func() locktest.TimedLock { return new(Monitor) }}

func TestFastWordFollowsMode(t *testing.T) { locktest.FastWordFollowsMode(t, &fastWord, fastLock) }
func TestAssemblyDefersToGo(t *testing.T)  { locktest.AssemblyDefersToGo(t, &fastWord, fastLock) }
