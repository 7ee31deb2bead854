package nohelperwait

import (
	"testing"
	"time"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/mutex"
)

// TestWaitsForEver waits for a lock that its holder never releases: with
// no helper, the wait timeout's report ends the test binary.
func TestWaitsForEver(t *testing.T) {
	defer detect.Configure(detect.WithWaitTimeout(200 * time.Millisecond))()
	var mu mutex.Mutex
	mu.Lock()
	done := make(chan struct{})
	go func() {
		mu.Lock()
		close(done)
	}()
	<-done
}
