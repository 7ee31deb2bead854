//go:build gc && (amd64 || arm64)

package gid

var Locate = locate

// SetOffset sets where Get reads the ID (0: the slow path) and returns a
// function that restores it. No other goroutine may call Get meanwhile.
func SetOffset(o uintptr) (restore func()) {
	old := offset
	offset = o
	return func() { offset = old }
}
