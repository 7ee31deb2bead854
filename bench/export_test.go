package bench

import "sync"

// CustomLock returns a Lock of a type the catalogue does not have, for
// testing the scenario helpers' checks. Only the contended scenarios use
// it (they go through sync.Locker).
func CustomLock(name string, newLock func() sync.Locker) Lock {
	return Lock{Name: name, Type: name, Depth: 1, ops: &lockOps{new: newLock}}
}
