// Package monitor provides Monitor, a reentrant lock keyed by goroutine ID,
// with Java-style condition waits.
//
// A Monitor is what Java's synchronized blocks and ReentrantLock, Ruby's
// Monitor and C#'s lock statement are to those languages: the goroutine
// that holds it may lock it again, any number of times, and it is released
// when every Lock has been matched by an Unlock. It carries one implicit
// condition (Wait, Notify, NotifyAll, like Object.wait/notify) and makes
// more with NewCond; waiting releases the monitor completely and restores
// the hold count before returning.
//
// RWMonitor is the reader/writer form, Java's ReentrantReadWriteLock:
// reentrant in both modes, the writer may read-lock and downgrade, a
// reader re-entering passes a waiting writer, and a reader asking for the
// write lock panics with ErrUpgrade instead of hanging. Its conditions
// belong to the write lock.
//
// Every broken contract panics with a *misuse.Error, which errors.Is
// matches to its sentinel (ErrNotOwner, ErrUpgrade, ErrNilContext,
// ErrStranded) and errors.As reads.
package monitor
