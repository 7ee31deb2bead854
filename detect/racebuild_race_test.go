//go:build race

package detect

// raceBuild: the test binary is built with -race.
const raceBuild = true
