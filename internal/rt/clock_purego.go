//go:build purego

package rt

import "sync/atomic"

// start is the origin of Nanotime, from wallNanos at initialisation.
var start = wallNanos()

// last is the largest reading Nanotime has returned.
var last atomic.Int64

// Nanotime returns the nanoseconds since start, never less than a reading
// it returned before. On Unix it reads the system's real-time clock
// (gettimeofday), which is real also inside a synctest bubble, where
// time.Now reads the bubble's fake clock; a step of that clock backwards
// holds Nanotime still until it catches up, a step forward shows as
// elapsed time. Elsewhere see wallNanos.
//
// Every park reads it: last's value is all it reads, hidden from the race
// detector (see race_race.go).
func Nanotime() int64 {
	now := wallNanos() - start
	raceHide()
	for {
		l := last.Load()
		if now <= l {
			now = l
			break
		}
		if last.CompareAndSwap(l, now) {
			break
		}
	}
	raceShow()
	return now
}
