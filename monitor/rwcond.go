package monitor

import (
	"fmt"

	"github.com/locksmith-go/locksmith/internal/core"
)

// readHost is the core.ReadHost of rw, for the core.ReadCond that lets
// condvar release every read hold of rw around a wait on a Cond bound to
// rw.RLocker(), and restore the count afterwards.
type readHost struct{ rw *RWMonitor }

func (h readHost) RW() (*core.RWLock, *core.Class) { return &h.rw.l, core.ClassRWMonitor }
func (h readHost) RLock()                          { h.rw.RLock() }
func (h readHost) RUnlockFailed(g int64)           { h.rw.runlockFailed(g) }

// WriterWaits: the writer, even with read holds, may not wait, since the
// wait would keep the write lock.
func (h readHost) WriterWaits(g int64) string {
	return fmt.Sprintf("condvar: wait on a Cond of rw.RLocker() by goroutine %d, which holds the *monitor.RWMonitor for writing: the wait would keep the write lock (wait on rw.NewCond(), or downgrade first)", g)
}
