package mutex_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/mutex"
)

// here returns "file:line" of its caller, plus delta lines.
func here(delta int) string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", filepath.Base(file), line+delta)
}

// panicText runs f and returns its panic value's text.
func panicText(t *testing.T, f func()) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "no panic")
		msg = fmt.Sprint(r)
	}()
	f()
	return ""
}

// A recursive Lock's panic names where the holder took the mutex and
// where it asked again, by each way of taking it first and asking again.
func TestRecursiveLockNamesBothSites(t *testing.T) {
	takes := []struct {
		name string
		take func(m *mutex.Mutex) string // takes m, returns the site
	}{
		{"Lock", func(m *mutex.Mutex) string { m.Lock(); return here(0) }},
		{"TryLock", func(m *mutex.Mutex) string { require.True(t, m.TryLock()); return here(0) }},
		{"LockContext", func(m *mutex.Mutex) string {
			require.NoError(t, m.LockContext(context.Background()))
			return here(-1)
		}},
		{"LockTimeout", func(m *mutex.Mutex) string { require.True(t, m.LockTimeout(time.Second)); return here(0) }},
	}
	agains := []struct {
		name  string
		again func(m *mutex.Mutex, at *string) // sets *at to its site (the same line), then asks again
	}{
		{"Lock", func(m *mutex.Mutex, at *string) { *at = here(0); m.Lock() }},
		{"LockContext", func(m *mutex.Mutex, at *string) { *at = here(0); _ = m.LockContext(context.Background()) }},
		{"LockTimeout", func(m *mutex.Mutex, at *string) { *at = here(0); m.LockTimeout(time.Second) }},
	}
	for _, tk := range takes {
		for _, ag := range agains {
			t.Run(tk.name+"/"+ag.name, func(t *testing.T) {
				var m mutex.Mutex
				first := tk.take(&m)
				defer m.Unlock()
				var second string
				msg := panicText(t, func() { ag.again(&m, &second) })
				if !sitesRecorded() {
					first = "not recorded" // the purego build's fast paths record no site
				} else {
					first = `\S*/` + regexp.QuoteMeta(first)
				}
				assert.Regexp(t, `: locked at `+first+`, locked again at \S*/`+regexp.QuoteMeta(second)+`$`, msg)
			})
		}
	}
}

// A recursive Lock or RLock by an RWMutex's writer names where it
// write-locked the mutex.
func TestRWMutexRecursiveNamesWriteSite(t *testing.T) {
	for _, again := range []struct {
		name string
		f    func(rw *mutex.RWMutex)
	}{
		{"Lock", (*mutex.RWMutex).Lock},
		{"RLock", (*mutex.RWMutex).RLock},
		{"LockContext", func(rw *mutex.RWMutex) { _ = rw.LockContext(context.Background()) }},
	} {
		t.Run(again.name, func(t *testing.T) {
			var rw mutex.RWMutex
			rw.Lock()
			first := here(-1)
			defer rw.Unlock()
			msg := panicText(t, func() { again.f(&rw) })
			if !sitesRecorded() {
				assert.NotContains(t, msg, "write-locked at", "the purego fast path records no site")
				return
			}
			assert.Regexp(t, `recursive locking: \S+ of rwmutex write-locked by the same goroutine \d+, write-locked at \S*/`+regexp.QuoteMeta(first)+`$`, msg)
		})
	}
}

// sitesRecorded reports whether the fast paths record where the holder
// took the lock: with the frame-pointer walk always, else (runtime.Callers)
// in Order mode only (core.SitePC).
func sitesRecorded() bool { return fastSites || detect.CurrentMode() == detect.Order }
