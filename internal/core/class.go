package core

// Class describes a lock type (lockdep calls this a lock class) for reports: its name as users write it.
type Class struct {
	Name      string // "mutex.Mutex"
	Reentrant bool
	RW        bool // the Lock is the writer lock of an RWLock (see RWOf)
}

var (
	ClassMutex     = &Class{Name: "mutex.Mutex"}
	ClassMonitor   = &Class{Name: "monitor.Monitor", Reentrant: true}
	ClassRWMutex   = &Class{Name: "mutex.RWMutex", RW: true}
	ClassRWMonitor = &Class{Name: "monitor.RWMonitor", Reentrant: true, RW: true}
)
