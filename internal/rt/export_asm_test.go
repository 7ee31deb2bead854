//go:build gc && (amd64 || arm64) && !purego

package rt

var Locate = locate

// SetOffset sets where Goid reads the ID (0: the slow path) and returns a
// function that restores it. No other goroutine may call Goid meanwhile.
func SetOffset(o uintptr) (restore func()) {
	old := goidOffset
	goidOffset = o
	return func() { goidOffset = old }
}
