// Package connpool is a bounded connection pool guarded by a lock: the
// pool of Jetty's connection-pool benchmark, written as a reusable package.
//
// A Pool hands out connections with Acquire (waiting until the context is
// done) or AcquireTimeout, takes them back with Release, and drops broken
// ones with Remove, which frees their place for a new connection; it never
// holds more than its capacity. Its lock is pluggable (Config.Locker): by
// default a mutex.Mutex, and in package bench each lock under test, so that
// the same workload (four goroutines acquiring, three releasing, one
// removing, capacity 250) measures each lock. Waiting uses a condvar.Cond
// bound to that lock, with timeouts and cancellation.
package connpool
