package detect_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestOrderDowngradeWhileOff: an RWMonitor write-locked in Order mode and
// downgraded (RLock, Unlock) while the mode is off leaves its record
// saying "write". The sweeper must not drop it as stale while the read
// lock is still held: it becomes a read record, as the release hook makes
// it in Order mode, and a lock taken under it after Order mode is back is
// ordered after it, from a read hold.
func TestOrderDowngradeWhileOff(t *testing.T) {
	detecttest.Configure(t, detect.WithMode(detect.Order))
	rw := new(monitor.RWMonitor)
	mu := new(mutex.Mutex)
	me := testutil.GoroutineID()
	// rw is taken under outer, so that it has a held record with its Meta:
	// a lock taken alone has a lone record, which a mode switch makes
	// stale (lone.go).
	var outer mutex.Mutex
	outer.Lock()
	defer outer.Unlock()
	rw.Lock()
	restore := detect.Configure(detect.WithMode(detect.Off))
	rw.RLock()
	rw.Unlock() // the downgrade, unseen by Order mode
	restore()
	detect.Sweep()
	assert.NotEmpty(t, detect.HeldFrames(me, rw), "the record of the read hold, dropped")
	mu.Lock()
	mu.Unlock()
	fromRead, _, ok := detect.EdgeReads(rw, mu)
	require.True(t, ok, "no edge rw -> mu: the read hold is not in the record")
	assert.True(t, fromRead, "the edge is not from a read hold")
	rw.RUnlock()
	detect.Sweep()
	assert.Empty(t, detect.HeldFrames(me, rw), "the record outlives the read hold")
}
