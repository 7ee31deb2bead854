//go:build race

package rt

import "runtime"

// raceHide and raceShow bracket synchronization that the race detector
// must not see (see internal/core/racehb_race.go): SlowGoid's pool of
// buffers, whose Get after another goroutine's Put would order the two,
// and Nanotime's last reading under purego.
func raceHide() { runtime.RaceDisable() }
func raceShow() { runtime.RaceEnable() }
