//go:build gc && !purego

package fpstack

// recordFrom is Record with the caller's frame pointer replaced by fp, for
// the tests of the walk's bounds. Implemented in walk_amd64.s.
//
//go:noescape
func recordFrom(fp uintptr, rec []uintptr) int
