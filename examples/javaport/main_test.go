package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, `javaport: a Java class with synchronized methods, ported to monitor.Monitor
restock(widget, 2); count(widget) = 2
3 pickers wait() in take()
picker A took 3 widget
picker B took 4 widget
picker C took 1 gadget
count() called from take() ran with hold count 2 (re-entry)
take(gizmo, 1, 20ms) = false (timed out)
interrupt() during take(gizmo): context canceled (InterruptedException); still waiting: 0
wait() without holding the monitor: panic matching monitor.ErrNotOwner = true
final stock: gadget=0 widget=0
`, out.String())
}

// TestSynchronizedMethodsReenter checks the port's central claim: a
// synchronized method called from another runs with the hold count one
// higher, and the monitor is free once the outer one returns.
func TestSynchronizedMethodsReenter(t *testing.T) {
	var w Warehouse
	w.Restock("widget", 1)
	require.NoError(t, w.Take(context.Background(), "widget", 1))
	assert.Equal(t, 2, w.countHolds)
	assert.False(t, w.m.Locked())
	w.Count("widget")
	assert.Equal(t, 1, w.countHolds)
}
