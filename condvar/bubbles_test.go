//go:build go1.25

package condvar_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// Package-level Conds, made at start-up outside any bubble.
var (
	sharedMu      mutex.Mutex
	sharedCond    = condvar.New(&sharedMu)
	sharedSyncMu  sync.Mutex
	sharedSyncCnd = condvar.New(&sharedSyncMu)
	sharedMon     monitor.Monitor
	sharedMonCnd  = sharedMon.NewCond()
)

// turnstile is a pool of tokens guarded by l: take waits on c until a
// token is free, put returns one and signals. Every put signals, so a
// waiter sleeps only while every token is held by a goroutine that will
// put it back: the workload always finishes.
type turnstile struct {
	l      sync.Locker
	c      *condvar.Cond
	tokens int // guarded by l
	inUse  int // guarded by l
}

func (ts *turnstile) run(n int, ops *atomic.Int64, over *atomic.Bool) {
	for i := range n {
		ts.l.Lock()
		for ts.tokens == 0 {
			ts.c.Wait()
		}
		ts.tokens--
		ts.inUse++
		if ts.inUse > 2 {
			over.Store(true)
		}
		ts.l.Unlock()
		ops.Add(1)
		ts.l.Lock()
		ts.tokens++
		ts.inUse--
		if i%8 == 0 {
			ts.c.Broadcast()
		} else {
			ts.c.Signal()
		}
		ts.l.Unlock()
	}
}

// Two bubbles and goroutines outside any wait on and signal one
// package-level Cond at the same time, for each kind of lock. Waking a
// goroutine durably blocked in a bubble from outside it is a fatal error
// in Go; here nothing dies, no wakeup is lost (the workload finishes) and
// no more than the two tokens are ever taken.
func TestSynctestCondSharedAcrossBubbles(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    sync.Locker
		c    *condvar.Cond
	}{
		{"mutex.Mutex", &sharedMu, sharedCond},
		{"sync.Mutex", &sharedSyncMu, sharedSyncCnd},
		{"monitor.Monitor", &sharedMon, sharedMonCnd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const rounds, workers, iters = 8, 3, 1000
			ts := &turnstile{l: tc.l, c: tc.c, tokens: 2}
			var ops atomic.Int64
			var over atomic.Bool
			for range rounds {
				testutil.AcrossBubbles(t, 2, func(t *testing.T) {
					testutil.Workers(workers, func(int) { ts.run(iters, &ops, &over) })
				}, workers, func() { ts.run(iters, &ops, &over) })
			}
			assert.Equal(t, int64(rounds*3*workers*iters), ops.Load())
			assert.False(t, over.Load(), "more than two tokens taken")
			assert.Zero(t, tc.c.Waiters())
		})
	}
}

// A Cond made inside a bubble parks the bubble's waiters durably. If it
// escapes, and a goroutine outside the bubble signals it while one of them
// waits, that goroutine cannot wake it (that would be a fatal error): the
// signal is recorded for the waiter, and the next Signal, Broadcast or
// wait from the waiter's bubble delivers it, also a wait that returns at
// once (a WaitTimeout with no time, a WaitContext whose context is done).
// The Cond is then shared: later waiters in the bubble park non-durably.
func TestSynctestCondSignalFromOutsideIsDelivered(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	deliverers := []struct {
		name    string
		deliver func(c *condvar.Cond)
	}{
		{"Signal", func(c *condvar.Cond) { c.Signal() }}, // nobody else waits
		{"Broadcast", func(c *condvar.Cond) { c.Broadcast() }},
		{"WaitTimeout(0)", func(c *condvar.Cond) { c.WaitTimeout(0) }},
		{"WaitContext(done)", func(c *condvar.Cond) { _ = c.WaitContext(done) }},
	}
	for _, k := range lockKinds() {
		for _, d := range deliverers {
			t.Run(k.name+"/"+d.name, func(t *testing.T) {
				req := make(chan func()) // made outside: both sides may use it
				served := make(chan struct{})
				outside := make(chan struct{})
				go func() {
					defer close(outside)
					for f := range req {
						f()
						served <- struct{}{}
					}
				}()
				synctest.Test(t, func(t *testing.T) {
					l, _ := k.new()
					c := condvar.New(l)
					ready := false // guarded by l
					woke := make(chan bool, 1)
					go func() {
						l.Lock()
						for !ready {
							c.Wait()
						}
						l.Unlock()
						woke <- true
					}()
					synctest.Wait() // returns only if the waiter is durably blocked
					require.Equal(t, 1, c.Waiters())

					req <- func() { // outside the bubble
						l.Lock()
						ready = true
						c.Signal()
						l.Unlock()
					}
					<-served
					synctest.Wait()
					assert.Empty(t, woke, "woken from outside the bubble")
					assert.Zero(t, c.Waiters(), "the signal was taken by the waiter")

					l.Lock()
					d.deliver(c) // delivers the pending wakeup
					l.Unlock()
					synctest.Wait()
					if !assert.Len(t, woke, 1, "the pending wakeup delivered") {
						l.Lock()
						c.Signal()
						l.Unlock()
					}
					assert.True(t, <-woke)
				})
				close(req)
				<-outside
			})
		}
	}
}
