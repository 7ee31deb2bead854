// Package core is the machinery shared by mutex.Mutex and monitor.Monitor:
// a lock word that holds the owner's goroutine ID, a FIFO queue of parked
// waiters, the read-write lock behind mutex.RWMutex and monitor.RWMonitor
// (rwlock.go), the registry of goroutines blocked on locksmith locks, and the
// wait-for walk that finds deadlocks. Package detect builds reports and the
// lock-order graph on top of it through the Engine it installs at init.
//
// Nothing here is public API; the public packages wrap it.
package core
