// Package copyvet copies locks by value, for TestVetReportsCopies: go vet's
// copylocks check must report each copy.
package copyvet

import (
	"github.com/locksmith-go/locksmith/condvar"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

func CopyMutex(m mutex.Mutex) mutex.Mutex { return m }

func CopyMonitor(m *monitor.Monitor) monitor.Monitor { return *m }

func CopyCond(c *condvar.Cond) condvar.Cond { return *c }

func CopyRWMutex(m mutex.RWMutex) mutex.RWMutex { return m }

func CopyRWMonitor(m *monitor.RWMonitor) monitor.RWMonitor { return *m }
