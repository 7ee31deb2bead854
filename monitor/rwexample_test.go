package monitor_test

import (
	"errors"
	"fmt"

	"github.com/locksmith-go/locksmith/monitor"
)

// Java's downgrade: take the write lock, update, take the read lock, and
// release the write lock; the goroutine goes on reading, and other readers
// may enter. Asking for the write lock while holding only the read lock
// panics with ErrUpgrade instead of hanging.
func ExampleRWMonitor() {
	var (
		rw   monitor.RWMonitor
		data string // guarded by rw
	)
	rw.Lock()
	data = "fresh"
	rw.RLock()
	rw.Unlock() // downgraded
	fmt.Println(data, rw.WriteHoldCount(), rw.ReadHoldCount())

	err := func() (err error) {
		defer func() { err, _ = recover().(error) }()
		rw.Lock()
		return nil
	}()
	fmt.Println(errors.Is(err, monitor.ErrUpgrade))
	rw.RUnlock()
	fmt.Println(rw.Readers())
	// Output:
	// fresh 0 1
	// true
	// 0
}
