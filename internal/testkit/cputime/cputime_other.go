//go:build !unix

package cputime

import "time"

// Available reports whether CPU times are measured on this system.
const Available = false

// Split reports no CPU time where getrusage is not available; CPU
// figures then read zero (check Available before printing them).
func Split() (user, sys time.Duration) { return 0, 0 }
