// Package cgocall calls back into Go from C, for fpstack's tests of walks
// that start in a cgo callback. Without cgo it is empty.
package cgocall
