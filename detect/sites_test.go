package detect_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// siteCall is where lockAt called the lock method, and the frames below
// lockAt as runtime.Callers gives them.
type siteCall struct {
	line  int
	below []runtime.Frame
}

// lockAt calls lock and returns where.
//
//go:noinline
func lockAt(lock func()) siteCall {
	_, _, line, _ := runtime.Caller(0)
	lock() // line+1
	var pcs [32]uintptr
	n := runtime.Callers(2, pcs[:])
	var below []runtime.Frame
	fs := runtime.CallersFrames(pcs[:n])
	for {
		f, more := fs.Next()
		below = append(below, f)
		if !more {
			return siteCall{line + 1, below}
		}
	}
}

// checkSite asserts that the recorded frames start at the library frame
// first (what each site skips: the detector's frames, or the lock core's
// waiting ones), reach lockAt where it called the lock method, and go on
// as runtime.Callers does below it.
func checkSite(t *testing.T, got []runtime.Frame, first string, at siteCall) {
	t.Helper()
	require.NotEmpty(t, got)
	assert.Equal(t, first, got[0].Function)
	i := 0
	for i < len(got) && got[i].Function != "github.com/locksmith-go/locksmith/detect_test.lockAt" {
		i++
	}
	require.Less(t, i, len(got), "no lockAt frame")
	assert.Equal(t, at.line, got[i].Line)
	key := func(fs []runtime.Frame) (out []string) {
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line))
		}
		return out
	}
	assert.Equal(t, key(at.below), key(got[i+1:]))
}

// TestSitesSkipTheLibrarysFrames: the first-lock site (of a lock first
// taken while another is held) and the held record start at core.Acquired (capture leaves out itself, acquire and
// engine.Acquired), the wait sites at the lock core's entry (acquireDeadline
// and its caller left out, or noteSite and two callers), and the frames
// below are the user's as runtime.Callers gives them.
func TestSitesSkipTheLibrarysFrames(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order))
	var o, a, b mutex.Mutex
	o.Lock() // a lock taken alone records no site: a and b are nested
	defer o.Unlock()
	atA := lockAt(a.Lock)
	atB := lockAt(b.Lock)
	first, _ := detect.SiteFrames(&a)
	checkSite(t, first, "github.com/locksmith-go/locksmith/internal/core.Acquired", atA)
	first, _ = detect.SiteFrames(&b)
	checkSite(t, first, "github.com/locksmith-go/locksmith/internal/core.Acquired", atB)
	checkSite(t, detect.HeldFrames(testutil.GoroutineID(), &b), "github.com/locksmith-go/locksmith/internal/core.Acquired", atB)
	b.Unlock()

	waitOn := func(hold, release func(), lock func() siteCall) siteCall {
		hold()
		got := make(chan siteCall, 1)
		go func() { got <- lock() }()
		testutil.WaitFor(t, "a goroutine blocked", func() bool { return detect.Blocked() == 1 })
		release()
		return testutil.Await(t, got, "the lock")
	}
	at := waitOn(func() {}, a.Unlock, func() siteCall { s := lockAt(a.Lock); a.Unlock(); return s })
	_, wait := detect.SiteFrames(&a)
	checkSite(t, wait, "github.com/locksmith-go/locksmith/internal/core.(*Lock).Acquire", at)

	var rw mutex.RWMutex
	at = waitOn(rw.Lock, rw.Unlock, func() siteCall { s := lockAt(rw.RLock); rw.RUnlock(); return s })
	_, wait = detect.SiteFrames(&rw)
	checkSite(t, wait, "github.com/locksmith-go/locksmith/internal/core.(*RWLock).RLockSlow", at)

	var rw2 mutex.RWMutex
	at = waitOn(rw2.RLock, rw2.RUnlock, func() siteCall { s := lockAt(rw2.Lock); rw2.Unlock(); return s })
	_, wait = detect.SiteFrames(&rw2)
	checkSite(t, wait, "github.com/locksmith-go/locksmith/internal/core.(*RWLock).Lock", at)
}
