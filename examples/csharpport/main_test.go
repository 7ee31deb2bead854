package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, `csharpport: a C# mailbox on lock and Monitor, ported to monitor.Monitor
PostAll(a, b, c): Post ran inside PostAll's lock with hold count 2
Receive x3: a b c
3 receivers in Monitor.Wait(gate)
3 Posts, each Monitor.Pulse(gate): they received m1 m2 m3
TryReceive(20ms) on an empty mailbox: "", false (Monitor.Wait timed out)
TryReceive(20ms) while another thread holds the lock: "", false (Monitor.TryEnter timed out)
TryReceive(1s) once it is free: "late", true
Close with 2 receivers waiting, Monitor.PulseAll(gate): they received null null
Post after Close: mailbox closed (InvalidOperationException)
Monitor.Exit(gate) without the lock: panic matching monitor.ErrNotOwner = true
Monitor.Wait(gate) without the lock: panic matching monitor.ErrNotOwner = true
`, out.String())
}

// TestPulseWakesOne checks the port's Pulse: with two receivers waiting,
// one Post wakes exactly one of them; the other goes on waiting until
// PulseAll (Close) wakes it.
func TestPulseWakesOne(t *testing.T) {
	var mb Mailbox
	got := make(chan string, 2)
	for range 2 {
		go func() {
			m, ok := mb.Receive()
			if !ok {
				m = "null"
			}
			got <- m
		}()
	}
	require.NoError(t, waitUntil(func() bool { return mb.Waiting() == 2 }))
	require.NoError(t, mb.Post("only"))
	assert.Equal(t, "only", testutil.Await(t, got, "a receiver woken by the Post"))
	require.NoError(t, waitUntil(func() bool { return mb.Waiting() == 1 }), "the other receiver waits on")
	mb.Close()
	assert.Equal(t, "null", <-got)
	assert.False(t, mb.gate.Locked())
}

// TestTryReceiveLeavesNoHold: whether TryReceive gives up waiting for the
// lock or for a message, the caller holds nothing afterwards.
func TestTryReceiveLeavesNoHold(t *testing.T) {
	var mb Mailbox
	_, ok := mb.TryReceive(time.Millisecond)
	assert.False(t, ok)
	assert.Zero(t, mb.gate.HoldCount())
	assert.False(t, mb.gate.Locked())

	held, release, released := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(released)
		mb.gate.Lock()
		close(held)
		<-release
		mb.gate.Unlock()
	}()
	<-held
	_, ok = mb.TryReceive(time.Millisecond)
	assert.False(t, ok)
	assert.Zero(t, mb.gate.HoldCount())
	close(release)
	<-released
	assert.False(t, mb.gate.Locked())
}
