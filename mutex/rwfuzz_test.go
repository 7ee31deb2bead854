package mutex_test

import (
	"testing"

	"github.com/locksmith-go/locksmith/internal/testkit/fuzzmodel"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// FuzzRWMutex checks RWMutex against a model of its semantics: every
// operation's result or panic, who waits where, and who goes next (see
// internal/testkit/fuzzmodel/rw.go). Run longer with
//
//	go test -run '^$' -fuzz '^FuzzRWMutex$' -fuzztime 100000x ./mutex
func FuzzRWMutex(f *testing.F) {
	for _, seed := range rwFuzzSeeds {
		f.Add(seed)
	}
	spec := fuzzmodel.RWFuzzLock{
		New: func() testutil.RWLock { return new(mutex.RWMutex) },
		Queues: func(l testutil.RWLock) (int, int) {
			return mutex.RWQueues(l.(*mutex.RWMutex))
		},
		Draining:  func(l testutil.RWLock) bool { return mutex.RWDraining(l.(*mutex.RWMutex)) },
		Recursive: mutex.ErrRecursiveLock,
		NotOwner:  mutex.ErrNotOwner,
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzmodel.RWFuzz(t, spec, data) })
}

// Seeds: op + 9*worker (ops: Lock, RLock, Unlock, RUnlock, TryLock,
// TryRLock, LockCtx, RLockCtx, Cancel).
var rwFuzzSeeds = [][]byte{
	{1, 10, 0, 9 + 1},            // two readers, a writer drains, a recursive RLock
	{1, 9, 18 + 1, 3, 9 + 2},     // reader, writer drains, reader queues; release
	{0, 9 + 6, 18 + 7, 9 + 8, 2}, // writer, ctx writer queued, ctx reader queued, cancel, unlock
	{1, 9 + 6, 18 + 1, 9 + 8},    // cancel a draining writer with a reader queued behind it
	{0, 1, 2, 2, 3, 4, 5, 4, 2},  // misuse and try on one worker
}
