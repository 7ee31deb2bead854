//go:build !goexperiment.goroutineleakprofile

package detect

// findLeaks does nothing: without GOEXPERIMENT=goroutineleakprofile the
// runtime has no leak profile, and a stuck waiter is reported as still
// waiting (see leaks_on.go).
func findLeaks() {}

// leakProfile says whether findLeaks can tell a leaked goroutine.
const leakProfile = false
