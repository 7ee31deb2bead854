//go:build go1.25

package detect_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// A goroutine blocked inside a testing/synctest bubble for longer than the
// wait timeout, in real time, is reported by the watchdog, which runs
// outside the bubble: the bubble's clock does not move meanwhile (its main
// goroutine waits for the report on a channel made outside the bubble,
// which is not a durable wait), so a watchdog timer of the bubble would
// never fire.
func TestWaitTimeoutInsideBubble(t *testing.T) {
	// Pinned to Cycles: Off runs no watchdog. The recorder's poke channel
	// is made outside the bubble.
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles), detect.WithWaitTimeout(waitTimeout))
	expired := make(chan struct{})
	timer := time.AfterFunc(testutil.Liveness, func() { close(expired) }) // real time
	defer timer.Stop()
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Mutex
		m.Lock()
		ids := make(chan int64, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			ids <- testutil.GoroutineID()
			m.Lock()
			m.Unlock()
		}()
		id := <-ids
		synctest.Wait()
		bubbleStart := time.Now()
		var got []*detect.Report
		for len(got) == 0 {
			select {
			case <-rec.Poked():
				got = reportsFor(rec, id)
			case <-expired:
				t.Fatal("no wait-timeout report for a goroutine blocked in the bubble")
			}
		}
		require.Len(t, got, 1)
		assert.GreaterOrEqual(t, got[0].Waited, waitTimeout)
		assert.Less(t, got[0].Waited, testutil.Liveness, "measured in real time, not across clocks")
		assert.Equal(t, bubbleStart, time.Now(), "the bubble's clock did not move")
		m.Unlock()
		<-done
	})
}
