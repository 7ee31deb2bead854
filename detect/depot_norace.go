//go:build !race

package detect

import (
	"math/bits"
	"slices"
	"sync"
)

// The depot's table (see depot.go): a map under a mutex. Race builds hide
// it from the race detector (depot_race.go).

var depot struct {
	mu sync.Mutex
	m  map[uint64]*stackRec
}

// intern returns the depot's record of pcs, adding one if there is none.
//
// The hash takes one multiply and a rotation per word, and mixes fully
// once at the end. mix on every word (two multiplies and three shifts in
// a chain) would double the cost of a hit for a stack of 20 words, more
// than the depot's lock and lookup together (go test -run '^$' -bench
// InternHit ./detect).
func intern(pcs []uintptr) *stackRec {
	h := uint64(len(pcs))
	for _, pc := range pcs {
		h = bits.RotateLeft64((h^uint64(pc))*0x9e3779b97f4a7c15, 29)
	}
	h = mix(h, 0)
	depot.mu.Lock()
	defer depot.mu.Unlock()
	for r := depot.m[h]; r != nil; r = r.next {
		if slices.Equal(r.pcs, pcs) {
			return r
		}
	}
	if depot.m == nil {
		depot.m = map[uint64]*stackRec{}
	}
	r := &stackRec{pcs: slices.Clone(pcs), next: depot.m[h]}
	depot.m[h] = r
	return r
}
