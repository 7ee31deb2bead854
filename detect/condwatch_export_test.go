package detect

import (
	"time"

	"github.com/locksmith-go/locksmith/internal/core"
)

// CondScanAt runs the watchdog's Cond checks with wait timeout d as a scan
// made ahead of now would: every registered wait looks that much older.
func CondScanAt(ahead, d time.Duration) []*Report {
	r, _ := condScan(core.Now()+int64(ahead), d)
	return r
}

// InCondWait reports whether goroutine g is registered as parked in a Cond
// wait.
func InCondWait(g int64) bool {
	_, ok := core.CondWaitOf(g)
	return ok
}
