//go:build go1.25

// testing/synctest.Test is Go 1.25; the module supports Go 1.24, whose
// toolchain skips this file.

package mutex_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/locktest"
)

func TestSynctestRWMutexTimeout(t *testing.T) { locktest.RWTimeoutSynctest(t, timedRWMutexRW) }
