package mutex_test

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/mutex"
)

// A recursive RLock's panic, and a reader's upgrade, name where the
// reader took its read hold, by each way of taking it and of asking again.
func TestRWMutexRecursiveRLockNamesReadSite(t *testing.T) {
	takes := []struct {
		name string
		take func(rw *mutex.RWMutex) string // read-locks rw, returns the site
	}{
		{"RLock", func(rw *mutex.RWMutex) string { rw.RLock(); return here(0) }},
		{"TryRLock", func(rw *mutex.RWMutex) string { require.True(t, rw.TryRLock()); return here(0) }},
		{"RLockContext", func(rw *mutex.RWMutex) string {
			require.NoError(t, rw.RLockContext(context.Background()))
			return here(-1)
		}},
		{"RLockTimeout", func(rw *mutex.RWMutex) string { require.True(t, rw.RLockTimeout(time.Second)); return here(0) }},
	}
	agains := []struct {
		name, what string
		again      func(rw *mutex.RWMutex)
	}{
		{"RLock", "recursive read locking", (*mutex.RWMutex).RLock},
		{"RLockContext", "recursive read locking", func(rw *mutex.RWMutex) { _ = rw.RLockContext(context.Background()) }},
		{"RLockTimeout", "recursive read locking", func(rw *mutex.RWMutex) { rw.RLockTimeout(time.Second) }},
		{"Lock", "read-to-write upgrade", (*mutex.RWMutex).Lock},
		{"LockContext", "read-to-write upgrade", func(rw *mutex.RWMutex) { _ = rw.LockContext(context.Background()) }},
	}
	for _, tk := range takes {
		for _, ag := range agains {
			t.Run(tk.name+"/"+ag.name, func(t *testing.T) {
				var rw mutex.RWMutex
				first := tk.take(&rw)
				defer rw.RUnlock()
				msg := panicText(t, func() { ag.again(&rw) })
				assertReadSite(t, ag.what, first, msg, true)
			})
		}
	}
}

// assertReadSite checks that msg, a recursive read panic of kind what,
// names first as the read site; fast says the hold was taken on a fast
// path, which the purego build does not record.
func assertReadSite(t *testing.T, what, first, msg string, fast bool) {
	t.Helper()
	if fast && !sitesRecorded() {
		assert.Regexp(t, what+`: \S+ of rwmutex read-locked by the same goroutine \d+, first rlock site not recorded$`, msg)
		return
	}
	assert.Regexp(t, what+`: \S+ of rwmutex read-locked by the same goroutine \d+, read-locked at \S*/`+regexp.QuoteMeta(first)+`$`, msg)
}

// The read site is kept for a reader outside its home slot and for one
// in the overflow map (more readers than slots), and for one that waited
// behind a writer and was admitted by its Unlock.
func TestRWMutexRecursiveRLockSiteBesideOtherReaders(t *testing.T) {
	for _, others := range []int{1, 8, 12} {
		t.Run(map[int]string{1: "one other", 8: "slots full", 12: "overflow"}[others], func(t *testing.T) {
			var rw mutex.RWMutex
			release := holdReaders(t, &rw, others)
			defer release()
			rw.RLock()
			first := here(-1)
			defer rw.RUnlock()
			msg := panicText(t, func() { rw.RLock() })
			assertReadSite(t, "recursive read locking", first, msg, others < 8)
		})
	}
	t.Run("admitted", func(t *testing.T) {
		var rw mutex.RWMutex
		rw.Lock()
		done := make(chan [2]string, 1)
		go func() {
			rw.RLock()
			first := here(-1)
			defer rw.RUnlock()
			defer func() { done <- [2]string{first, fmt.Sprint(recover())} }()
			rw.RLock()
		}()
		require.Eventually(t, func() bool { _, r := mutex.RWQueues(&rw); return r == 1 }, 10*time.Second, time.Millisecond)
		rw.Unlock()
		got := <-done
		assertReadSite(t, "recursive read locking", got[0], got[1], false)
	})
}

// A read lock taken by a call through an interface (RLocker's Lock, not
// devirtualized) is taken inside this package: no user frame is
// recorded, and the panic says so.
func TestRWMutexRecursiveRLockThroughInterface(t *testing.T) {
	var rw mutex.RWMutex
	lockVia(rw.RLocker())
	defer rw.RUnlock()
	msg := panicText(t, func() { rw.RLock() })
	assert.Regexp(t, `recursive read locking: rlock of rwmutex read-locked by the same goroutine \d+, first rlock site not recorded$`, msg)
}

//go:noinline
func lockVia(l sync.Locker) { l.Lock() }

// holdReaders has n goroutines read-lock rw and hold it until the
// returned function is called, which waits for them to leave.
func holdReaders(t *testing.T, rw *mutex.RWMutex, n int) (release func()) {
	t.Helper()
	var in, out sync.WaitGroup
	stop := make(chan struct{})
	in.Add(n)
	out.Add(n)
	for range n {
		go func() {
			defer out.Done()
			rw.RLock()
			in.Done()
			<-stop
			rw.RUnlock()
		}()
	}
	in.Wait()
	require.Equal(t, n, rw.Readers())
	return func() {
		close(stop)
		out.Wait()
	}
}
