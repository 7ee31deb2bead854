package detect_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
)

// A read-only cycle deadlocks only through writers queued behind its
// readers; a writer that cannot queue (TryLock, LockTimeout with a
// timeout of zero or less) holds out no reader, and does not make the
// cycle reportable. A TryLock held while its goroutine takes another
// lock does count: that writer holds the lock while it waits.

type tryWriter interface {
	rwLock
	TryLock() bool
	LockTimeout(time.Duration) bool
}

// tryAlone write-locks l by try on a new goroutine holding nothing else.
func tryAlone(t *testing.T, l rwLock, try func(tryWriter) bool) {
	t.Helper()
	p := testutil.Spawn(func() {
		if !try(l.(tryWriter)) {
			panic("a try of a free lock failed")
		}
		l.Unlock()
	})
	require.Nil(t, p.Wait(t))
}

var nonQueuingWrites = []struct {
	name string
	try  func(tryWriter) bool
}{
	{"TryLock", tryWriter.TryLock},
	{"LockTimeout(0)", func(l tryWriter) bool { return l.LockTimeout(0) }},
	{"LockTimeout(-1)", func(l tryWriter) bool { return l.LockTimeout(-1) }},
}

// TestOrderRWReadCycleTryWrite: R(A)R(B) and R(B)R(A), then a
// non-queuing write-lock of each lock: no report. A blocking Lock of
// each afterwards makes the cycle reportable, reported once.
func TestOrderRWReadCycleTryWrite(t *testing.T) {
	for _, kind := range rwKinds {
		for _, w := range nonQueuingWrites {
			t.Run(kind+"/"+w.name, func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				nest(t, a, 'R', b, 'R')
				nest(t, b, 'R', a, 'R')
				for range 2 {
					tryAlone(t, a, w.try)
					tryAlone(t, b, w.try)
				}
				require.Empty(t, rec.All(), "only non-queuing writes: %s", rec)
				writeAlone(t, a)
				require.Empty(t, rec.All(), "B never write-locked by a write that queues: %s", rec)
				writeAlone(t, b)
				require.Len(t, rec.All(detect.LockOrder), 1, "%s", rec)
				assert.Empty(t, detect.OrderConsistent())
			})
		}
	}
}

// TestOrderRWTryWriteHeldUnderNesting: a TryLock of B held while its
// goroutine read-locks A counts as a write of B (it holds B's readers out
// while it waits for A): with R(A)R(B) and a blocking Lock of A, the
// cycle is reported, by the acquisition that makes it.
func TestOrderRWTryWriteHeldUnderNesting(t *testing.T) {
	for _, kind := range rwKinds {
		for _, first := range []string{"cycle-first", "nesting-first"} {
			t.Run(kind+"/"+first, func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				tryNest := func() {
					p := testutil.Spawn(func() {
						if !b.(tryWriter).TryLock() {
							panic("TryLock of a free lock failed")
						}
						defer b.Unlock()
						a.RLock()
						a.RUnlock()
					})
					require.Nil(t, p.Wait(t))
				}
				writeAlone(t, a)
				if first == "cycle-first" {
					nest(t, a, 'R', b, 'R')
					require.Empty(t, rec.All(), "%s", rec)
					tryNest()
				} else {
					tryNest()
					require.Empty(t, rec.All(), "%s", rec)
					nest(t, a, 'R', b, 'R')
				}
				require.Len(t, rec.All(detect.LockOrder), 1, "%s", rec)
				tryNest()
				nest(t, a, 'R', b, 'R')
				require.Len(t, rec.All(), 1, "reported once: %s", rec)
				assert.Empty(t, detect.OrderConsistent())
			})
		}
	}
}
