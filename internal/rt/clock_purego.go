//go:build purego

package rt

import (
	"sync/atomic"
	"time"
)

// start is the origin of Nanotime, taken during package initialisation,
// which never runs inside a synctest bubble: it carries a monotonic
// reading.
var start = time.Now()

// last is the largest reading Nanotime has returned.
var last atomic.Int64

// Nanotime returns the nanoseconds since start on the monotonic clock of
// package time. Inside a testing/synctest bubble time.Now reads the
// bubble's fake clock and carries no monotonic reading: there Nanotime
// stands still at the largest reading taken outside bubbles (so it never
// mixes fake time with real time, and never goes back), and waits inside
// bubbles are measured from readings taken outside them.
func Nanotime() int64 {
	t := time.Now()
	if t == t.Round(0) { // no monotonic reading: inside a bubble
		return last.Load()
	}
	now := int64(t.Sub(start))
	for {
		l := last.Load()
		if now <= l {
			return l
		}
		if last.CompareAndSwap(l, now) {
			return now
		}
	}
}
