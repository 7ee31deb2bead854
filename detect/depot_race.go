//go:build race

package detect

import (
	"math/bits"
	"sync"

	"github.com/locksmith-go/locksmith/internal/core"
)

// The depot's table in race builds. Every goroutine's first acquisition of
// a kind interns its stack (capture); had the depot's mutex been visible
// to the race detector, each such goroutine would be ordered after every
// goroutine that interned a stack before it, and a data race between two
// goroutines that take different locks would go unreported. So the mutex
// is held between core.RaceHide and core.RaceShow, and the table it guards
// is open addressing on the stack's hash, every access //go:norace, as
// the registries of package core are (internal/core/racehb_race.go). A
// record's program counters are written once, by //go:norace code, into
// memory just allocated: the detector has no access to them to check the
// readers' against, so a record found by one goroutine and made by
// another needs no ordering.
var depot struct {
	mu    sync.Mutex
	slots []*stackRec // by hash, a chain of same-hash records in each
	keys  []uint64    // slots' hashes
	n     int
}

// intern returns the depot's record of pcs, adding one if there is none,
// with the hash of depot_norace.go's intern.
func intern(pcs []uintptr) *stackRec {
	h := uint64(len(pcs))
	for _, pc := range pcs {
		h = bits.RotateLeft64((h^uint64(pc))*0x9e3779b97f4a7c15, 29)
	}
	h = mix(h, 0)
	core.RaceHide()
	depot.mu.Lock()
	r := depotIntern(h, pcs)
	depot.mu.Unlock()
	core.RaceShow()
	return r
}

// depotIntern is intern's lookup and insertion; depot.mu is held.
//
//go:norace
func depotIntern(h uint64, pcs []uintptr) *stackRec {
	i, ok := depotFind(h)
	if ok {
		for r := depot.slots[i]; r != nil; r = r.next {
			if equalPCs(r.pcs, pcs) {
				return r
			}
		}
	}
	c := make([]uintptr, len(pcs))
	//lint:ignore S1001 copy is runtime.slicecopy under -race, checked even from //go:norace code (see shiftHeld)
	for j := range pcs {
		c[j] = pcs[j]
	}
	if ok {
		r := &stackRec{pcs: c, next: depot.slots[i]}
		depot.slots[i] = r
		return r
	}
	if (depot.n+1)*4 > len(depot.slots)*3 {
		depotGrow()
		i, _ = depotFind(h)
	}
	r := &stackRec{pcs: c}
	depot.slots[i], depot.keys[i] = r, h
	depot.n++
	return r
}

// depotFind returns the slot of hash h, or the empty slot where it goes.
//
//go:norace
func depotFind(h uint64) (int, bool) {
	if len(depot.slots) == 0 {
		return -1, false
	}
	mask := len(depot.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		switch {
		case depot.slots[i] == nil:
			return i, false
		case depot.keys[i] == h:
			return i, true
		}
	}
}

//go:norace
func depotGrow() {
	old, oldKeys := depot.slots, depot.keys
	n := 2 * len(old)
	if n == 0 {
		n = 64
	}
	depot.slots, depot.keys = make([]*stackRec, n), make([]uint64, n)
	for j := range old {
		if old[j] != nil {
			i, _ := depotFind(oldKeys[j])
			depot.slots[i], depot.keys[i] = old[j], oldKeys[j]
		}
	}
}

//go:norace
func equalPCs(a, b []uintptr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
