package core

// Order-mode seam for read-write locks: acquisitions and releases go to
// the engine with their mode, which keeps read holds apart from write
// holds and applies the rules for readers (package detect's order.go).

// AcquiredRW forwards an acquisition of an RWLock in mode read. As with
// Acquired, if the engine does not return (a LockOrder reporter panicked
// or ended the goroutine), the acquisition is undone before the panic or
// the exit goes on: a write through RWLock.Unlock, so that readers queued
// behind it are let in, a read by dropping the hold just taken. mw is the
// mode word the caller loaded (see Acquired): while a recheck is
// pending, it runs it first, and forwards only in Order mode.
func AcquiredRW(l *Lock, k *Class, g int64, try, read bool, mw int32) {
	if mw != ModeOrder && !runRecheck(g) {
		return
	}
	report := engine.AcquiredRW(l, k, g, try, read)
	if report == nil {
		return
	}
	done := false
	defer func() {
		if done {
			return
		}
		if read {
			RWOf(l, k).RUnlock(g, false)
			engine.ReleasedRW(l, g, true)
			return
		}
		// Forwarded after the release, deferred in case the release
		// panics (see wakeable): the engine asks the lock what g still
		// holds, and drops g's record only once g is no longer the writer.
		defer engine.ReleasedRW(l, g, false)
		RWOf(l, k).Unlock(g)
	}()
	report()
	done = true
}

// ReleasedRW forwards a release of an RWLock in mode read, made before the
// call: the engine asks the lock what g still holds; mw is as for
// AcquiredRW.
func ReleasedRW(l *Lock, g int64, read bool, mw int32) {
	if mw != ModeOrder && !runRecheck(g) {
		return
	}
	engine.ReleasedRW(l, g, read)
}
