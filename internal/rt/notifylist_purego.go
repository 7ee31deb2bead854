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

func NotifyListAdd(l *NotifyList) uint32 { noList(l); return 0 }

func NotifyListWait(l *NotifyList, _ uint32) { noList(l) }

func NotifyListNotifyAll(l *NotifyList) { noList(l) }

func NotifyListNotifyOne(l *NotifyList) { noList(l) }

// noList panics for any list. It tests l rather than panic outright so
// that the callers' code after a call does not read as unreachable to
// staticcheck, which would then flag the values it uses (SA4006) in this
// build only.
func noList(l *NotifyList) {
	if l != nil {
		panic(errNoNotifyList)
	}
}

const errNoNotifyList = "rt: the runtime's notify list is not linked in a purego build"
