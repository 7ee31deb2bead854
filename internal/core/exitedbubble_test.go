//go:build go1.25

package core

import (
	"fmt"
	"os"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
)

// Inside a bubble, a wait for a lock whose holder has exited (it took the
// lock on the fast path, so nothing cached its domain, and a dump cannot
// show it any more) parks durably: the holder wakes nobody, and every
// other party is of the bubble, so synctest reports the bubble's deadlock
// at once instead of hanging until go test's -timeout. For a Lock's
// waiter, a reader behind an exited writer, and a writer waiting for an
// exited reader. Each runs in a child process: the waiter stays blocked.
func TestSynctestExitedHolderDurable(t *testing.T) {
	if kind := os.Getenv("LOCKSMITH_EXITED_BUBBLE_CHILD"); kind != "" {
		exitedBubbleChild(t, kind)
		return
	}
	bubbleChildren(t, "TestSynctestExitedHolderDurable", "LOCKSMITH_EXITED_BUBBLE_CHILD", "exited-bubble: reported")
}

func exitedBubbleChild(t *testing.T, kind string) {
	var l Lock
	var rw RWLock
	deadlock := func() (r any) {
		defer func() { r = recover() }()
		synctest.Test(t, func(t *testing.T) {
			holder := make(chan int64, 1)
			go func() { // takes the lock without waiting, and returns holding it
				g := gid.Get()
				switch kind {
				case "lock":
					l.FastAcquire(g)
				case "reader":
					_ = rw.Lock(g, nil, ClassRWMutex)
				case "writer":
					_ = rw.RLockSlow(g, nil, ClassRWMutex)
				}
				holder <- g
			}()
			h := <-holder
			synctest.Wait() // the holder has exited
			_, cached := cachedDomain(h)
			require.False(t, cached, "the holder's domain is not cached")
			b := gid.Get()
			switch kind {
			case "lock":
				_ = l.Acquire(b, nil, ClassMutex)
			case "reader":
				_ = rw.RLockSlow(b, nil, ClassRWMutex)
			case "writer":
				_ = rw.Lock(b, nil, ClassRWMutex)
			}
		})
		return nil
	}()
	require.NotNil(t, deadlock, "synctest.Test did not report the deadlock")
	assert.Contains(t, fmt.Sprint(deadlock), "deadlock")
	fmt.Println("exited-bubble: reported")
}
