package misuse_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/misuse"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEveryMisusePanicIsAnError: a misuse of each kind, in each package,
// panics with a *misuse.Error that errors.As finds, whose Err is the
// documented sentinel, whose Goroutine is the caller's, and that matches
// the sentinel with errors.Is under every package's name for it.
func TestEveryMisusePanicIsAnError(t *testing.T) {
	var nilCtx context.Context
	for _, tc := range []struct {
		name     string
		misuse   func()
		sentinel error
		also     []error // the same sentinel under other packages' names
	}{
		{"mutex Unlock of unlocked", func() { new(mutex.Mutex).Unlock() },
			mutex.ErrNotOwner, []error{misuse.ErrNotOwner, monitor.ErrNotOwner, condvar.ErrNotOwner}},
		{"mutex recursive Lock", func() {
			var mu mutex.Mutex
			mu.Lock()
			defer mu.Unlock()
			mu.Lock()
		}, mutex.ErrRecursiveLock, nil},
		{"mutex LockContext(nil)", func() { _ = new(mutex.Mutex).LockContext(nilCtx) },
			mutex.ErrNilContext, []error{misuse.ErrNilContext, monitor.ErrNilContext, condvar.ErrNilContext}},
		{"rwmutex RUnlock without a read lock", func() { new(mutex.RWMutex).RUnlock() }, mutex.ErrNotOwner, nil},
		{"rwmutex recursive RLock", func() {
			var rw mutex.RWMutex
			rw.RLock()
			defer rw.RUnlock()
			rw.RLock()
		}, mutex.ErrRecursiveLock, nil},
		{"rwmutex upgrade", func() {
			var rw mutex.RWMutex
			rw.RLock()
			defer rw.RUnlock()
			_ = rw.LockTimeout(time.Hour)
		}, mutex.ErrRecursiveLock, nil},
		{"rwmutex RLockContext(nil)", func() { _ = new(mutex.RWMutex).RLockContext(nilCtx) }, mutex.ErrNilContext, nil},
		{"monitor Unlock of unlocked", func() { new(monitor.Monitor).Unlock() }, monitor.ErrNotOwner, nil},
		{"monitor Wait without the monitor", func() { new(monitor.Monitor).Wait() }, monitor.ErrNotOwner, nil},
		{"monitor Notify without the monitor", func() { new(monitor.Monitor).Notify() }, monitor.ErrNotOwner, nil},
		{"monitor WaitUntilTimeout without the monitor", func() {
			new(monitor.Monitor).WaitUntilTimeout(time.Hour, func() bool { return true })
		}, monitor.ErrNotOwner, nil},
		{"monitor WaitContext(nil)", func() {
			var m monitor.Monitor
			m.Lock()
			defer m.Unlock()
			_ = m.WaitContext(nilCtx)
		}, monitor.ErrNilContext, nil},
		{"rwmonitor upgrade", func() {
			var rw monitor.RWMonitor
			rw.RLock()
			defer rw.RUnlock()
			rw.Lock()
		}, monitor.ErrUpgrade, nil},
		{"rwmonitor RUnlock without a read lock", func() { new(monitor.RWMonitor).RUnlock() }, monitor.ErrNotOwner, nil},
		{"rwmonitor LockContext(nil)", func() { _ = new(monitor.RWMonitor).LockContext(nilCtx) }, monitor.ErrNilContext, nil},
		{"condvar New(nil)", func() { condvar.New(nil) }, condvar.ErrNilLocker, nil},
		{"condvar Cond with a nil L", func() { new(condvar.Cond).Wait() }, condvar.ErrNilLocker, nil},
		{"condvar Wait without the lock", func() { condvar.New(new(mutex.Mutex)).Wait() }, condvar.ErrNotOwner, nil},
		{"condvar WaitWhileContext without the lock", func() {
			_ = condvar.New(new(mutex.Mutex)).WaitWhileContext(context.Background(), func() bool { return false })
		}, condvar.ErrNotOwner, nil},
		{"condvar WaitContext(nil)", func() {
			var mu mutex.Mutex
			c := condvar.New(&mu)
			mu.Lock()
			defer mu.Unlock()
			_ = c.WaitContext(nilCtx)
		}, condvar.ErrNilContext, nil},
		{"condvar L changed", func() {
			var a, b mutex.Mutex
			c := &condvar.Cond{L: &a}
			_ = c.Locker()
			c.L = &b
			_ = c.Locker()
		}, condvar.ErrLockerChanged, nil},
		{"condvar wait on RLocker() by the writer", func() {
			rw := new(mutex.RWMutex)
			c := condvar.New(rw.RLocker())
			rw.Lock()
			defer rw.Unlock()
			c.Wait()
		}, condvar.ErrReadLocker, []error{misuse.ErrReadLocker}},
		{"detect WithMode out of range", func() { detect.WithMode(detect.Mode(42)) }, detect.ErrBadOption, nil},
		{"detect WithWaitTimeout negative", func() { detect.WithWaitTimeout(-time.Second) }, detect.ErrBadOption, nil},
		{"detect SetName of a foreign lock", func() { detect.SetName(new(sync.Mutex), "x") }, detect.ErrNotLocksmithLock, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := testutil.Catch(tc.misuse)
			require.NotNil(t, v, "no panic")
			err, ok := v.(error)
			require.Truef(t, ok, "panic value %#v is not an error", v)
			var me *misuse.Error
			require.True(t, errors.As(err, &me), "errors.As(%T, *misuse.Error)", v)
			assert.Equal(t, tc.sentinel, me.Err, "Err")
			assert.Nil(t, me.Cause, "Cause")
			assert.Equal(t, testutil.GoroutineID(), me.Goroutine, "Goroutine")
			assert.Equal(t, me.Msg, err.Error())
			assert.NotEmpty(t, me.Msg)
			assert.ErrorIs(t, err, tc.sentinel)
			for _, s := range tc.also {
				assert.ErrorIs(t, err, s)
			}
		})
	}
}

// TestErrorUnwrap: an Error matches Err and Cause, and formats as Msg, or
// as Err when Msg is empty.
func TestErrorUnwrap(t *testing.T) {
	cause := errors.New("cause")
	e := &misuse.Error{Msg: "pkg: what went wrong", Err: misuse.ErrNotOwner, Cause: cause, Goroutine: 7}
	assert.ErrorIs(t, e, misuse.ErrNotOwner)
	assert.ErrorIs(t, e, cause)
	assert.NotErrorIs(t, e, misuse.ErrStranded)
	assert.Equal(t, "pkg: what went wrong", e.Error())

	bare := &misuse.Error{Err: misuse.ErrStranded}
	assert.Equal(t, misuse.ErrStranded.Error(), bare.Error())
	assert.ErrorIs(t, bare, misuse.ErrStranded)
	assert.NotErrorIs(t, bare, cause)

	onlyCause := &misuse.Error{Cause: cause}
	assert.ErrorIs(t, onlyCause, cause)
	assert.Empty(t, (&misuse.Error{}).Unwrap())
	assert.Empty(t, (&misuse.Error{}).Error())
}
