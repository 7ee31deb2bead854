//go:build purego

package rt

// NotifyList stands for the runtime's ticket list behind sync.Cond in a
// build without //go:linkname (-tags purego), where condvar takes no
// ticket and the functions below panic: Wait and Notify stay equal, so a
// caller that checks them first (as condvar's Signal and Broadcast do)
// never calls one.
type NotifyList struct {
	Wait   uint32
	Notify uint32
}

func NotifyListAdd(*NotifyList) uint32 { panic(errNoNotifyList) }

func NotifyListWait(*NotifyList, uint32) { panic(errNoNotifyList) }

func NotifyListNotifyAll(*NotifyList) { panic(errNoNotifyList) }

func NotifyListNotifyOne(*NotifyList) { panic(errNoNotifyList) }

const errNoNotifyList = "rt: the runtime's notify list is not linked in a purego build"
