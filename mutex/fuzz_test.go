package mutex_test

// Model-based fuzzing of Mutex, by the driver in internal/testkit/fuzzmodel: Lock,
// TryLock, LockContext (cancelled while queued, or with a context already
// done), Unlock and misuse by three workers, checked step by step against
// a reference model, including which queued worker an Unlock hands the
// mutex to (the first: nobody barges in while the driver waits). A panic
// between Lock and a deferred Unlock must leave the mutex free.
//
// Run longer with, for example:
//
//	go test -run '^$' -fuzz '^FuzzMutex$' -fuzztime 200000x ./mutex
//
// The seed corpus is testdata/fuzz/FuzzMutex/<seed name>; TestFuzzMutexSeeds
// checks it against fzSeeds, and rewrites it with -fuzzseeds.write.

import (
	"slices"
	"testing"

	"github.com/locksmith-go/locksmith/detect"
	fm "github.com/locksmith-go/locksmith/internal/testkit/fuzzmodel"
	"github.com/locksmith-go/locksmith/mutex"
)

func FuzzMutex(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) { fm.Run(t, fzMutex, data) })
}

var fzMutex = fm.Subject{
	Name:      "mutex.Mutex",
	Ops:       slices.Concat(fm.LockOps, []fm.Op{fm.LockPanic}),
	Recursive: mutex.ErrRecursiveLock,
	NotOwner:  mutex.ErrNotOwner,
	Pkg:       "mutex",
	New: func() fm.Instance {
		m := new(mutex.Mutex)
		return fm.Instance{Lock: m, QueueLen: func() int { return mutex.QueueLen(m) }}
	},
}

// The seed corpus: named inputs that each exercise one rule.

func fzEncode(mode detect.Mode, steps ...fm.Step) []byte {
	return fm.Encode(fzMutex.Ops, mode, steps...)
}

var fzSeeds = map[string][]byte{
	"handoff_fifo": fzEncode(detect.Cycles,
		fm.S(fm.Lock, 0), fm.S(fm.Lock, 1), fm.S(fm.Lock, 2), fm.S(fm.Unlock, 0), fm.S(fm.Lock, 0),
		fm.S(fm.Unlock, 1), fm.S(fm.Unlock, 2), fm.S(fm.Unlock, 0)),
	"recursive_lock": fzEncode(detect.Off,
		fm.S(fm.Lock, 0), fm.S(fm.Lock, 0), fm.S(fm.LockCtx, 0), fm.S(fm.TryLock, 0), fm.S(fm.Unlock, 0), fm.S(fm.Lock, 0), fm.S(fm.Unlock, 0)),
	"unlock_misuse": fzEncode(detect.Order,
		fm.S(fm.Unlock, 0), fm.S(fm.Lock, 1), fm.S(fm.Unlock, 0), fm.S(fm.Unlock, 2), fm.S(fm.Unlock, 1), fm.S(fm.Unlock, 1)),
	"trylock_everyone_false": fzEncode(detect.Cycles,
		fm.S(fm.TryLock, 0), fm.S(fm.TryLock, 0), fm.S(fm.TryLock, 1), fm.S(fm.TryLock, 2), fm.S(fm.Unlock, 0), fm.S(fm.TryLock, 2), fm.S(fm.Unlock, 2)),
	"cancel_queued_head": fzEncode(detect.Cycles,
		fm.S(fm.Lock, 0), fm.S(fm.LockCtx, 1), fm.S(fm.Lock, 2), fm.S(fm.Cancel, 1), fm.S(fm.Unlock, 0), fm.S(fm.Unlock, 2)),
	"cancel_queued_tail": fzEncode(detect.Order,
		fm.S(fm.Lock, 0), fm.S(fm.Lock, 1), fm.S(fm.LockCtx, 2), fm.S(fm.Cancel, 2), fm.S(fm.Unlock, 0), fm.S(fm.Unlock, 1)),
	"cancel_all_queued": fzEncode(detect.Off,
		fm.S(fm.Lock, 0), fm.S(fm.LockCtx, 1), fm.S(fm.LockCtx, 2), fm.S(fm.Cancel, 2), fm.S(fm.Cancel, 1), fm.S(fm.Cancel, 1), fm.S(fm.Unlock, 0)),
	"lockctx_done_context": fzEncode(detect.Cycles,
		fm.S(fm.LockDone, 0), fm.S(fm.Lock, 0), fm.S(fm.LockDone, 0), fm.S(fm.LockDone, 1), fm.S(fm.Unlock, 0)),
	"panic_under_deferred_unlock": fzEncode(detect.Order,
		fm.S(fm.LockPanic, 0), fm.S(fm.LockPanic, 1), fm.S(fm.Lock, 2), fm.S(fm.LockPanic, 2), fm.S(fm.Unlock, 2), fm.S(fm.LockPanic, 0)),
	"queue_then_drain": fzEncode(detect.Cycles,
		fm.S(fm.Lock, 0), fm.S(fm.LockCtx, 1), fm.S(fm.Lock, 2)),
	"requeue_after_cancel": fzEncode(detect.Order,
		fm.S(fm.Lock, 0), fm.S(fm.LockCtx, 1), fm.S(fm.Cancel, 1), fm.S(fm.LockCtx, 1), fm.S(fm.Lock, 2), fm.S(fm.Unlock, 0),
		fm.S(fm.Cancel, 2), fm.S(fm.Unlock, 1), fm.S(fm.Unlock, 2)),
	"ping_pong": fzEncode(detect.Off,
		fm.S(fm.Lock, 0), fm.S(fm.Lock, 1), fm.S(fm.Unlock, 0), fm.S(fm.Lock, 0), fm.S(fm.Unlock, 1), fm.S(fm.Lock, 1),
		fm.S(fm.Unlock, 0), fm.S(fm.Lock, 0), fm.S(fm.Unlock, 1), fm.S(fm.Unlock, 0)),
}

// TestFuzzMutexSeeds checks that the committed seed corpus is the one
// fzSeeds describes (rewriting it with -fuzzseeds.write); plain go test
// then runs every seed through FuzzMutex.
func TestFuzzMutexSeeds(t *testing.T) { fm.CheckSeeds(t, "mutex", "FuzzMutex", fzSeeds) }
