//go:build purego

package condvar

// See ticketpath.go: without //go:linkname there is no ticket path.
const ticketPath = false
