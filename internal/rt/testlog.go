package rt

import (
	"os"
	"runtime/debug"
	"slices"
	"strings"
)

// TestBinary reports whether the program is a test binary linked by go
// test (run by go test, or built with go test -c and run directly, under
// any name), as testing.Testing does, without linking package testing
// into every program that asks (see testlog_unix.go for what to re-check
// on a new Go release).
//
// The rule: the main package's import path, in the build information,
// ends in ".test". cmd/go names a test binary's main package so in the
// same place where it sets testing.testBinary for testing.Testing
// (load.TestPackagesFor). A program whose own main package's import path
// ends in ".test" is taken for a test binary too. Before go1.24, cmd/go
// wrote no path into a test binary's build information (only the Go
// version), which no binary built by go build or go run lacks: an empty
// path is taken for a test binary. Without build
// information (a binary not built by cmd/go), a "-test." flag among the
// arguments decides, which go test always passes.
//
// Rejected alternatives, checked against a binary run by go test, one
// built with go test -c and run directly, and a program that imports
// package detect (go tool nm shows whether package testing is linked):
//   - testing.Testing itself: it links package testing, its flags and
//     their dependencies into every program that uses a locksmith lock.
//   - The "-test." flags in os.Args: go test passes -test.testlogfile,
//     -test.paniconexit0 and -test.timeout, but a test binary run
//     directly may have no argument at all.
//   - A ".test" suffix on os.Args[0]: go test -c -o names the binary
//     freely, and any program may be called x.test.
//   - A linkname read of testing.testBinary: the linker rejects the pull
//     ("invalid reference to testing.testBinary") as soon as package
//     testing is linked, that is, in every test binary.
//   - Deciding lazily once testing.Init has registered its flags
//     (flag.Lookup("test.v")): that happens in testing.MainStart, after
//     every package's initialisation, while the default reporter is
//     chosen during it, and locks taken by other packages'
//     initialisation are already checked.
func TestBinary() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return strings.HasSuffix(bi.Path, ".test") || bi.Path == ""
	}
	return slices.ContainsFunc(os.Args[1:], func(a string) bool {
		return strings.HasPrefix(a, "-test.") || strings.HasPrefix(a, "--test.")
	})
}

// TestLogFile returns the value of go test's -test.testlogfile flag in
// args (the program's arguments, without the name), or "".
func TestLogFile(args []string) string {
	for _, a := range args {
		for _, p := range []string{"-test.testlogfile=", "--test.testlogfile="} {
			if v, ok := strings.CutPrefix(a, p); ok {
				return v
			}
		}
	}
	return ""
}
