package condvar_test

// Model-based fuzzing of Cond on each kind of lock it is documented for:
// *sync.Mutex (a plain Locker), *mutex.Mutex and *monitor.Monitor, by the
// driver in internal/testkit/fuzzmodel: Wait, WaitTimeout, WaitContext, Signal and
// Broadcast mixed with the lock's own operations by three workers, checked
// step by step against a reference model. Misuse (Wait without an
// owner-aware lock, Unlock by a non-owner, recursive Lock of a Mutex) must
// panic with exactly the documented error and change nothing; Signal and
// Broadcast work with or without the lock, as sync.Cond's do.
//
// Run longer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzCondMonitor$' -fuzztime 200000x ./condvar
//
// The seed corpus is testdata/fuzz/<target>/<seed name>; TestFuzzCondSeeds
// checks it against fzCondSeeds, and rewrites it with -fuzzseeds.write.

import (
	"fmt"
	"sync"
	"testing"

	"github.com/locksmith-go/locksmith/condvar"
	fm "github.com/locksmith-go/locksmith/internal/testkit/fuzzmodel"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func FuzzCondSyncMutex(f *testing.F) { fzCondFuzz(f, fzCondSyncMutex) }
func FuzzCondMutex(f *testing.F)     { fzCondFuzz(f, fzCondMutex) }
func FuzzCondMonitor(f *testing.F)   { fzCondFuzz(f, fzCondMonitor) }

func fzCondFuzz(f *testing.F, s fm.Subject) {
	f.Fuzz(func(t *testing.T, data []byte) { fm.Run(t, s, data) })
}

// fzWaitMisuse is a Cond's misuse: Wait without holding its owner-aware
// lock.
func fzWaitMisuse(g, _ int64) (string, error) {
	return fmt.Sprintf("condvar: wait without holding the lock (goroutine %d)", g), condvar.ErrNotOwner
}

// fzCondOn returns the Instance of a Cond on l, a locksmith lock.
func fzCondOn(l sync.Locker) fm.Instance {
	return fm.Instance{Lock: l, QueueLen: func() int { return condvar.LockQueueLen(l) }, Cond: condvar.New(l)}
}

var (
	fzCondSyncMutex = fm.Subject{Name: "sync.Mutex", Ops: fm.CondOps,
		New: func() fm.Instance {
			mu := new(sync.Mutex)
			// A *sync.Mutex shows neither its holder nor its queue: the
			// driver finds its parked workers by their wait reason.
			return fm.Instance{Lock: mu, ParkedIn: "sync.Mutex.Lock", Cond: condvar.New(mu)}
		}}
	fzCondMutex = fm.Subject{Name: "mutex.Mutex", Ops: fm.CondOps,
		Recursive: mutex.ErrRecursiveLock, NotOwner: mutex.ErrNotOwner, Pkg: "mutex", WaitMisuse: fzWaitMisuse,
		New: func() fm.Instance { return fzCondOn(new(mutex.Mutex)) }}
	fzCondMonitor = fm.Subject{Name: "monitor.Monitor", Ops: fm.CondOps,
		Reentrant: true, NotOwner: monitor.ErrNotOwner, Pkg: "monitor", WaitMisuse: fzWaitMisuse,
		New: func() fm.Instance { return fzCondOn(new(monitor.Monitor)) }}
)

// fzCondSeeds is the seed corpus of every target.
var fzCondSeeds = fm.CondSeeds(fm.CondOps)

// TestFuzzCondSeeds checks that the committed seed corpus is the one
// fzCondSeeds describes (rewriting it with -fuzzseeds.write); plain go test
// then runs every seed through each fuzz target.
func TestFuzzCondSeeds(t *testing.T) {
	for _, target := range []string{"FuzzCondSyncMutex", "FuzzCondMutex", "FuzzCondMonitor"} {
		fm.CheckSeeds(t, "condvar", target, fzCondSeeds)
	}
}
