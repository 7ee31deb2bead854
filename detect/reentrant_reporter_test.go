package detect_test

import (
	"context"
	"io"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestReporterMayCallBack checks that the detector never calls a reporter
// while holding one of its own locks: a reporter that uses Dump, WriteDOT,
// Configure, SetName and locksmith locks itself must not hang, for a
// lock-order report and for a deadlock report.
func TestReporterMayCallBack(t *testing.T) {
	var own mutex.Mutex // the reporter's own lock, taken inside the report
	var mu sync.Mutex
	var kinds []detect.Kind
	detecttest.Configure(t, detect.WithMode(detect.Order))
	defer detect.Configure(detect.WithReporter(func(r *detect.Report) {
		own.Lock()
		defer own.Unlock()
		detect.SetName(&own, "reporter's lock")
		detect.Dump(io.Discard)
		assert.NoError(t, detect.WriteDOT(io.Discard))
		detect.Configure()() // reads and restores the configuration
		mu.Lock()
		kinds = append(kinds, r.Kind)
		mu.Unlock()
	}))()

	// A lock-order inversion within one goroutine.
	var a, b mutex.Mutex
	a.Lock()
	b.Lock()
	b.Unlock()
	a.Unlock()
	b.Lock()
	a.Lock()
	a.Unlock()
	b.Unlock()

	// A real two-goroutine deadlock: the goroutine closing it gets the
	// error, and its reporter call must return for that to happen.
	var c, d mutex.Mutex
	p := halfCycle(t, &d, &c)
	err := d.LockContext(context.Background())
	require.ErrorIs(t, err, detect.ErrDeadlock)
	c.Unlock()
	require.Nil(t, p.Wait(t))

	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, kinds, detect.LockOrder)
	assert.Contains(t, kinds, detect.Deadlock)
}
