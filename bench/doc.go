// Package bench measures what locksmith's locks cost beside sync.Mutex,
// a floor lock (FloorLock: the least owner tracking costs, a measuring
// stick and not a lock to use), sync.RWMutex, go-deadlock's Mutex, two
// spin locks and a channel lock: the cost of owner tracking, of
// reentrancy and of each deadlock-detection mode, uncontended and
// contended, in CPU time as well as real time.
//
// Each scenario is one helper run against every lock (Locks): Pairs
// (uncontended Lock/Unlock pairs, and re-entry at depth 2 and 8), Nested
// (two locks taken in order), Contended (1 to 8 goroutines with about
// 100 ns of work inside the lock), CondPingPong (a handoff through
// condvar.Cond, against sync.Cond and a channel pair), Pool (Jetty's
// connection-pool workload on bench/connpool) and BatchQueue (items
// one at a time or in batches through bench/batchqueue, against a
// buffered channel). The read-write locks (RWLocks: sync.RWMutex as the
// baseline, mutex.RWMutex, monitor.RWMonitor at a first entry and
// re-entered, in each detection mode, and go-deadlock's RWMutex) have
// their own: ReadPairs and WritePairs (uncontended RLock/RUnlock and
// Lock/Unlock pairs) and RWMix (goroutines sharing one lock, a given
// percentage of the operations reads). The Go benchmarks in this package
// and the lockbench command (bench/cmd/lockbench) both call these
// helpers, so the two report the same measurements; lockplot
// (bench/cmd/lockplot) draws lockbench's JSON report as the charts of
// BENCHMARKS.md and the README.
//
// CPU time is the whole process's user plus system time from getrusage,
// so a lock that spins, or a scheduler that spins looking for work, shows
// up as CPU time per operation even when throughput looks good.
//
// Figures from a shared or busy machine are indicative only; compare
// ratios within one run, not numbers across runs.
package bench
