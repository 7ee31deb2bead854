// Package shapes is the catalogue's programs: known blocking-bug shapes
// from real Go code, each a TestBug test, and beside each its fixed twin,
// a TestFixed test of the same name that must pass without a report. The
// driver in package catalog compiles this package once with go test -c
// and runs each test in its own process, so that the test binary's
// defaults apply and a bug's stuck goroutines never reach another test.
//
// With CATALOG_VERIFY=1 every test first calls detect.VerifyNone(t), the
// one-line helper that reports, when a test ends, the goroutines it left
// blocked on a lock.
package shapes
