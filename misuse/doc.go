// Package misuse defines the panic value of every broken lock contract in
// locksmith, and the sentinels that mutex, monitor and condvar share.
//
// A call that breaks a contract (an Unlock by a goroutine that does not
// hold the lock, a recursive Lock of a mutex.Mutex, a Wait without the
// lock, a nil context, a bad detect option) panics with an *Error and
// leaves every lock as it was. Match the panic value with errors.Is on the
// sentinel that names the misuse (ErrNotOwner here, or a package's own:
// mutex.ErrRecursiveLock, monitor.ErrUpgrade, condvar.ErrCopied,
// detect.ErrBadOption, ...), and with errors.As to read the fields:
//
//	defer func() {
//		if err, ok := recover().(error); ok {
//			var me *misuse.Error
//			if errors.As(err, &me) && errors.Is(me, mutex.ErrNotOwner) {
//				log.Printf("goroutine %d unlocked a lock it does not hold", me.Goroutine)
//			}
//		}
//	}()
//
// mutex.ErrNotOwner, monitor.ErrNotOwner and condvar.ErrNotOwner are the
// value ErrNotOwner, so errors.Is matches whichever package's name the
// caller uses; the same holds for ErrNilContext and ErrStranded.
//
// Outcomes a caller can handle are not misuse and are not an *Error: a
// *detect.DeadlockError, a *detect.LockOrderError, ctx.Err().
//
// The package imports nothing of locksmith, so that the lock engine, which
// builds every *Error, can import it.
package misuse
