package testutil

import (
	"sync"
	"testing"
)

// rwHomeSlots is the number of inline reader slots of core.RWLock; a
// goroutine's home slot is its ID modulo this.
const rwHomeSlots = 8

// HoldReaders starts n goroutines that each take a read lock with rlock
// and hold it until release is called (which then waits for them to call
// runlock and exit). The first of them has the calling goroutine's home
// slot (its goroutine ID is congruent to the caller's modulo 8), so that a
// read by the caller must take a slot other than its home slot: the path
// that goroutines spawned in sequence after the caller never exercise.
func HoldReaders(t testing.TB, n int, rlock, runlock func()) (release func()) {
	t.Helper()
	me := GoroutineID()
	stop := make(chan struct{})
	holding := make(chan bool)
	var wg sync.WaitGroup
	start := func(only func(id int64) bool) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !only(GoroutineID()) {
				holding <- false
				return
			}
			rlock()
			holding <- true
			<-stop
			runlock()
		}()
	}
	sameSlot := func(id int64) bool { return id%rwHomeSlots == me%rwHomeSlots }
	anyID := func(int64) bool { return true }
	for tries := 0; ; tries++ {
		if tries == 10000 {
			wg.Wait()
			t.Fatal("no goroutine with the caller's home slot in 10000 tries")
		}
		start(sameSlot)
		if Await(t, holding, "reader") {
			break
		}
	}
	for range n - 1 {
		start(anyID)
		Await(t, holding, "reader")
	}
	return func() {
		close(stop)
		wg.Wait()
	}
}
