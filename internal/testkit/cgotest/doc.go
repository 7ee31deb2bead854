// Package cgotest checks how the locks and the detector see the callbacks
// of C threads into Go: a C thread's callbacks are one goroutine to the
// runtime, whose ID passes to a later C thread's callbacks once the thread
// has exited (see package gid). Its code and tests need cgo (build tag
// cgo); without a C compiler the package is empty.
package cgotest
