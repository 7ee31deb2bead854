package stress

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/locksmith-go/locksmith/detect"
)

// switchModes starts the goroutine of Config.SwitchModes: until the
// returned stop function is called, it puts the detector in a random mode
// (Off, Cycles or Order) with detect.Configure, keeps it there for a
// random time of up to maxModeHold while the round's goroutines hold and
// wait for locks, and restores the configuration. stop waits for the
// goroutine to exit (with the configuration restored) and returns the
// number of switches it made.
//
// The hold is a short sleep, not a spin or a Gosched loop: a switcher that
// never lets go of a core would starve the workers on a small machine, and
// a mode that lasts only a few instructions would rarely see a lock taken
// in one mode and released in another. Nothing waits on the sleep.
func (r *round) switchModes() (stop func() int64) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, uint64(r.n)<<32|1<<31))
	done := make(chan struct{})
	var n int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		modes := [...]detect.Mode{detect.Off, detect.Cycles, detect.Order}
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for {
			restore := detect.Configure(detect.WithMode(modes[rng.IntN(len(modes))]))
			n++
			timer.Reset(time.Duration(rng.Int64N(int64(maxModeHold))))
			select {
			case <-done:
				restore()
				return
			case <-timer.C:
			}
			restore()
		}
	}()
	return func() int64 {
		close(done)
		wg.Wait()
		return n
	}
}

// maxModeHold bounds how long the mode switcher keeps a mode.
const maxModeHold = 2 * time.Millisecond

// checkDetectorIdle checks, once a round's goroutines have all exited
// (none holds or waits for a lock), that the detector agrees: in Order
// mode, set for the check, detect.Dump lists no blocked goroutine and no
// held lock, and detect.WriteDOT succeeds. A lock taken in Order mode and
// released in another mode, or a goroutine parked in Off mode and woken in
// Cycles mode, must leave no record behind.
func (r *round) checkDetectorIdle() {
	defer detect.Configure(detect.WithMode(detect.Order))()
	var dump bytes.Buffer
	detect.Dump(&dump)
	out := dump.String()
	held, _, _ := strings.Cut(out[strings.Index(out, "\nheld locks:")+1:], "\nreported problems:")
	if !strings.Contains(out, "\nblocked goroutines: 0\n") || strings.Contains(held, " holds:") {
		r.an.addf("round %d: with every goroutine of the round exited, detect.Dump still lists blocked goroutines or held locks:\n%s", r.n+1, out)
	}
	var dot bytes.Buffer
	if err := detect.WriteDOT(&dot); err != nil {
		r.an.addf("round %d: detect.WriteDOT: %v", r.n+1, err)
	}
}
