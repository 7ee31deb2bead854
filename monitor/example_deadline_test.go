package monitor_test

import (
	"fmt"
	"time"

	"github.com/locksmith-go/locksmith/monitor"
)

// C#'s "while (!ready) if (!Monitor.Wait(o, left)) ..." loop, or Java's
// wait(left) loop, on the monitor's implicit condition: WaitUntilTimeout
// keeps one deadline across every Notify and restores the hold count.
func ExampleMonitor_WaitUntilTimeout() {
	var m monitor.Monitor
	ready := false // guarded by m

	go func() {
		m.Lock()
		ready = true
		m.NotifyAll()
		m.Unlock()
	}()

	m.Lock()
	m.Lock() // a nested hold, released and restored by the wait
	ok := m.WaitUntilTimeout(time.Minute, func() bool { return ready })
	fmt.Println(ok, m.HoldCount())
	m.Unlock()
	m.Unlock()
	// Output:
	// true 2
}
