package mutex

import (
	"fmt"

	"github.com/locksmith-go/locksmith/internal/core"
)

// readHost is the core.ReadHost of rw, for the core.ReadCond that lets
// condvar release and retake rw's read lock around a wait on a Cond bound
// to rw.RLocker(), as sync.Cond's Wait does with sync.RWMutex's RLocker:
// an RWMutex is not reentrant, so there is one read hold to restore.
type readHost struct{ rw *RWMutex }

func (h readHost) RW() (*core.RWLock, *core.Class) { return &h.rw.l, core.ClassRWMutex }
func (h readHost) RLock()                          { h.rw.RLock() }
func (h readHost) RUnlockFailed(g int64)           { h.rw.runlockFailed(g) }

// WriterWaits: the writer holds no read lock either, but the message says
// what to wait on instead, since the likely mistake is the Cond.
func (h readHost) WriterWaits(g int64) string {
	return fmt.Sprintf("condvar: wait on a Cond of rw.RLocker() by goroutine %d, which holds the *mutex.RWMutex for writing and no read lock (wait on condvar.New(rw) instead)", g)
}
