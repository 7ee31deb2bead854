//go:build purego && !unix

package rt

import "time"

// origin carries a monotonic reading: initialisation never runs inside a
// synctest bubble.
var origin = time.Now()

// wallNanos reads package time's monotonic clock, from origin. Inside a
// synctest bubble time.Now reads the bubble's fake clock and carries no
// monotonic reading: there wallNanos stands still at the last reading
// taken outside bubbles, so that fake time never mixes with real time.
func wallNanos() int64 {
	t := time.Now()
	if t == t.Round(0) { // no monotonic reading: inside a bubble
		return 0 // before start: Nanotime stands still
	}
	return int64(t.Sub(origin))
}
