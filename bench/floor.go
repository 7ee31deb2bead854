package bench

import "github.com/locksmith-go/locksmith/internal/testkit/testutil"

// FloorLock is a measuring stick, not a lock to use: the simplest lock
// that records its owner's goroutine ID (one atomic word, goid.Get on
// every Lock and Unlock, waiters that only yield the processor). Its rows
// (FloorName) say what owner tracking costs at least on the machine that
// ran them. It is internal/testkit/testutil's FloorLock, which the benchmarks of
// packages mutex and monitor measure too.
type FloorLock = testutil.FloorLock
