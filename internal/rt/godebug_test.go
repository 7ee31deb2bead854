//go:build go1.25

// This package's synctest tests need the timers of go1.23 on
// (asynctimerchan=0: testing/synctest refuses to run without them), and
// go.mod's go line (go 1.22) selects the older ones by default.
//go:debug asynctimerchan=0

package rt
