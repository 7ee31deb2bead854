//go:build !race

package condvar

// See race.go.

func (c *Cond) raceRelease() {}

func (c *Cond) raceAcquire() {}
