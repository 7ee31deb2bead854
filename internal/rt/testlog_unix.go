//go:build unix

package rt

// Re-check on a new Go release: go test's private protocol with a test
// binary, which package detect relies on so that go test's result cache
// keys a package's result on LOCKSMITH_DETECT, LOCKSMITH_DETECT_REPORT and
// LOCKSMITH_WAIT_TIMEOUT.
// None of it is documented API; all of it lives in the testlog*.go files
// of this package.
//   - cmd/go passes -test.testlogfile=FILE to a test binary whose result it
//     may cache (cmd/go/internal/test/test.go, testlogArg), and reads FILE
//     back ("testlog.txt") to learn the result's inputs.
//   - testing.(*M).Run creates FILE (os.Create in (*M).before) and then
//     installs the log (testdeps.StartTestLog, internal/testlog.SetLogger),
//     before the first test: TestLogStarted takes FILE's existence for the
//     start of the log. os.Getenv and os.LookupEnv calls made before it
//     are not inputs of the cached result.
//   - tests, benchmarks and fuzz targets run on goroutines other than the
//     main one; examples run on the main one.
//   - the main package of a test binary has the import path of the package
//     under test plus ".test" (cmd/go/internal/load/test.go, where the
//     -X testing.testBinary=1 that makes testing.Testing true is set too),
//     which the build information records: TestBinary reads it there.
//
// detect's TestGoTestCacheSeesTheEnvironment and TestGoTestFailsOnInversion
// run the real go command over the whole chain.

import "syscall"

// TestLogStarted reports whether go test's log file exists, that is,
// whether testing has started the log. It calls the system directly: an
// os.Stat would itself be recorded in the log as an input of the test.
func TestLogStarted(path string) bool {
	var st syscall.Stat_t
	return syscall.Stat(path, &st) == nil
}
