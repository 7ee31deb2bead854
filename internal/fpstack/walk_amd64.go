//go:build gc && !purego && go1.23

package fpstack

// recordFrom is Record with the caller's frame pointer replaced by fp, for
// the tests of the walk's bounds. Implemented in walk_amd64.s.
//
//go:noescape
func recordFrom(fp uintptr, rec []uintptr) int
