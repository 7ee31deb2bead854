package stress

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/monitor"
)

// TestCheckDetectorIdleSeesHeldLock checks that the end-of-round check of
// Config.SwitchModes reports a lock the detector lists as held, and
// nothing once it is released.
func TestCheckDetectorIdleSeesHeldLock(t *testing.T) {
	defer detect.Configure(detect.WithMode(detect.Order))()
	var an anomalies
	r := newRound(Config{}, 0, &an)
	var m monitor.Monitor
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
}
