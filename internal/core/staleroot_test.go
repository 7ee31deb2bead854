//go:build go1.25

package core

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/internal/gid"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A goroutine outside any bubble that holds a lock while it runs
// synctest.Test counts as a goroutine of the bubble until Test returns: a
// waiter of the bubble parks durably, and Test reports the deadlock at
// once. That holds also when the holder's domain was cached as DomOutside
// before it called Test (it had waited on a lock, made a Cond, signalled
// one): the stale entry must not make the waiter park on sem, which would
// leave Test hanging until go test's -timeout. For a Lock's waiter, a
// reader behind the writer lock, and a writer waiting for a reader. Each
// runs in a child process: the bubble's waiter stays blocked for good.
func TestSynctestStaleRootDomain(t *testing.T) {
	if kind := os.Getenv("LOCKSMITH_STALE_ROOT_CHILD"); kind != "" {
		staleRootChild(t, kind)
		return
	}
	bubbleChildren(t, "TestSynctestStaleRootDomain", "LOCKSMITH_STALE_ROOT_CHILD", "stale-root: reported")
}

// bubbleChildren runs test again in a child process for each of a Lock's
// waiter ("lock"), a reader ("reader") and a writer ("writer"), with env
// naming the case, and requires each child to print marker: its bubble
// reported the deadlock. A child's own -test.timeout is short, since a
// hang is the failure; the child fails anyway (a goroutine of its bubble
// stays blocked), so only the marker and the absence of a fatal error
// count.
func bubbleChildren(t *testing.T, test, env, marker string) {
	for _, kind := range []string{"lock", "reader", "writer"} {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testutil.Liveness)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.timeout=15s")
			cmd.Env = append(os.Environ(), env+"="+kind)
			out, _ := cmd.CombinedOutput()
			require.NoError(t, ctx.Err(), "the child hung:\n%s", out)
			assert.NotContains(t, string(out), "fatal error")
			assert.True(t, strings.Contains(string(out), marker), "child output:\n%s", out)
		})
	}
}

func staleRootChild(t *testing.T, kind string) {
	g := gid.Get()
	require.Equal(t, DomOutside, CurDomain())
	d, ok := cachedDomain(g)
	require.True(t, ok && d == DomOutside, "the holder's domain is cached")
	var l Lock
	var rw RWLock
	switch kind {
	case "lock":
		require.True(t, l.FastAcquire(g))
	case "reader":
		require.NoError(t, rw.Lock(g, nil, ClassRWMutex))
	case "writer":
		require.NoError(t, rw.RLockSlow(g, nil, ClassRWMutex))
	}
	deadlock := func() (r any) {
		defer func() { r = recover() }()
		synctest.Test(t, func(t *testing.T) {
			b := gid.Get()
			switch kind {
			case "lock":
				_ = l.Acquire(b, nil, ClassMutex) // behind the holder running Test
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
	fmt.Println("stale-root: reported")
}

// fillFromDump puts the root of each bubble it shows (the caller of
// synctest.Test) in the root cache, from which isRoot answers without a
// dump.
func TestRootCache(t *testing.T) {
	const root = 1<<39 + 7 // an ID no real goroutine has
	dump := "goroutine 549755813895 [synctest.Run (durable), synctest bubble 77]:\nmain.h()\n"
	assert.Equal(t, Domain(78), fillFromDump([]byte(dump), root))
	r, ok := cachedRoot(78)
	require.True(t, ok)
	assert.Equal(t, int64(root), r)
	assert.True(t, isRoot(root, 78))
	assert.False(t, isRoot(root+1, 78), "another goroutine")
	assert.False(t, isRoot(root, 79), "another bubble, which no dump shows")
	assert.False(t, isRoot(root, DomOutside))
}
