package stress

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/fpstack"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestCheckDetectorIdleSeesHeldLock checks that the end-of-round check of
// Config.SwitchModes reports a lock the detector lists as held, and
// nothing once it is released.
func TestCheckDetectorIdleSeesHeldLock(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Order))()
	var an anomalies
	r := newRound(Config{}, 0, &an)
	var m monitor.Monitor
	detect.SetName(&m, "m") // detection state: Dump counts its holds
	m.Lock()
	m.Lock()
	r.checkDetectorIdle()
	m.Unlock()
	m.Unlock()
	items, _ := an.list()
	if assert.Len(t, items, 1) {
		assert.True(t, strings.Contains(items[0], "(hold count 2)"), items[0])
	}
	r.checkDetectorIdle()
	items, _ = an.list()
	assert.Len(t, items, 1, "a released lock is still listed")

	// A lock held alone, which has no detection state, is listed too.
	var alone mutex.Mutex
	alone.Lock()
	r.checkDetectorIdle()
	alone.Unlock()
	items, _ = an.list()
	if assert.Len(t, items, 2) {
		assert.Contains(t, items[1], "*mutex.Mutex", items[1])
		if fpstack.CheapCaller { // elsewhere a lock taken alone gets its state (detect's lone path)
			assert.Contains(t, items[1], "taken alone", items[1])
		}
	}
	r.checkDetectorIdle()
	items, _ = an.list()
	assert.Len(t, items, 2, "a released lock is still listed")
}
