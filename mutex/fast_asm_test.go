//go:build amd64 && gc && !race && !purego

package mutex

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
)

// fastLock is a Mutex for the fast-path suites that mutex and monitor
// share (only New is used).
var fastLock = locktest.Lock{Name: "mutex", New: func() locktest.TimedLock { return new(Mutex) }}

func TestFastWordFollowsMode(t *testing.T) { locktest.FastWordFollowsMode(t, &fastWord, fastLock) }
func TestAssemblyDefersToGo(t *testing.T)  { locktest.AssemblyDefersToGo(t, &fastWord, fastLock) }
