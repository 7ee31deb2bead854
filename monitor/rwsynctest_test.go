//go:build go1.25

package monitor_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksmith-go/locksmith/monitor"
)

// A re-entrant reader passes a writer that is durably blocked waiting for
// it, and a condition wait with read and write holds is durably blocking
// and restores both counts on the bubble's clock.
func TestSynctestRWMonitor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rw monitor.RWMonitor
		rw.RLock()
		done := make(chan struct{})
		go func() {
			rw.Lock()
			rw.Unlock()
			close(done)
		}()
		synctest.Wait()
		assert.True(t, monitor.RWDraining(&rw))
		rw.RLock() // re-entry: does not wait for the writer
		assert.Equal(t, 2, rw.ReadHoldCount())
		rw.RUnlock()
		rw.RUnlock()
		<-done

		c := rw.NewCond()
		rw.Lock()
		rw.RLock()
		start := time.Now()
		assert.False(t, c.WaitTimeout(time.Minute))
		assert.Equal(t, time.Minute, time.Since(start))
		assert.Equal(t, 1, rw.WriteHoldCount())
		assert.Equal(t, 1, rw.ReadHoldCount())
		rw.RUnlock()
		rw.Unlock()
	})
}
