package rt

import "strings"

// states classifies every goroutine state that a header of Go 1.22 to
// 1.26 may show (runtime2.go's waitReasonStrings, traceback.go's
// gStatusStrings): true for a state in which a goroutine's association
// with a synctest bubble may be temporary, false for one where the bubble
// a header names is the goroutine's own. Temporary: running or runnable
// (running one of a bubble's timers, or preempted while it assists the
// garbage collector), the garbage collector's waits (the runtime detaches
// a goroutine from its bubble while it starts or assists a collection),
// and the wait of the caller of synctest.Test, counted in the bubble only
// until the bubble ends. internal/core's domain cache caches a bubble
// from a dump only for a goroutine in a state of false.
//
// When a Go release lands: diff waitReasonStrings and gStatusStrings
// against this table, add each new state with its class (a new wait of
// the garbage collector or of the scheduler is temporary; a new blocking
// operation a user's goroutine parks in is not), and run the capture
// (capture_test.go) with the new toolchain. TestStatesClassified fails on
// a captured state the table does not know.
var states = map[string]bool{
	// gStatusStrings
	"idle": false, "runnable": true, "running": true, "syscall": false,
	"waiting": false, "dead": false, "copystack": false, "preempted": false,
	"leaked": false, "waiting for cgo callback": false,

	// waitReasonStrings: the garbage collector's and the scheduler's
	"GC assist marking": true, "GC assist wait": true, "GC sweep wait": true,
	"GC scavenge wait": true, "GC worker (idle)": true, "GC worker (active)": true,
	"GC mark termination": true, "GC weak to strong wait": true,
	"garbage collection": true, "garbage collection scan": true,
	"force gc (idle)": true, "semacquire": true, "stopping the world": true,
	"wait for GC cycle": true, "synctest.Run": true,

	// waitReasonStrings: the rest
	"IO wait": false, "dumping heap": false, "panicwait": false,
	"finalizer wait": false, "GOMAXPROCS updater (idle)": false,
	"sleep": false, "chan receive (nil chan)": false, "chan send (nil chan)": false,
	"select (no cases)": false, "select": false, "chan receive": false,
	"chan send": false, "sync.Cond.Wait": false, "sync.Mutex.Lock": false,
	"sync.RWMutex.RLock": false, "sync.RWMutex.Lock": false,
	"sync.WaitGroup.Wait": false, "trace reader (blocked)": false,
	"debug call": false, "flushing proc caches": false,
	"trace goroutine status": false, "trace proc status": false,
	"page trace flush": false, "coroutine": false, "synctest.Wait": false,
	"chan receive (durable)": false, "chan send (durable)": false,
	"select (durable)": false, "sync.WaitGroup.Wait (durable)": false,
	"cleanup wait": false,
	// Go 1.24's GOEXPERIMENT=synctest
	"chan receive (synctest)": false, "chan send (synctest)": false,
	"select (synctest)": false,
}

// baseState returns state without the suffixes goroutineheader appends
// to it: " (durable)" (Go 1.26, for waits idle in a bubble), " (scan)",
// " (leaked)".
func baseState(state string) string {
	for {
		if _, ok := states[state]; ok {
			return state // "chan receive (durable)" is a state of its own
		}
		cut := false
		for _, suffix := range [...]string{" (durable)", " (scan)", " (leaked)"} {
			if t, ok := strings.CutSuffix(state, suffix); ok {
				state, cut = t, true
				break
			}
		}
		if !cut {
			return state
		}
	}
}

// Transient reports whether a goroutine shown in state (Header.State)
// may be in the bubble its header names only for the moment. A state the
// table does not know is treated as transient: not caching is always
// safe, and costs a dump later.
func Transient(state string) bool {
	t, ok := states[baseState(state)]
	return t || !ok
}

// knownState reports whether the table classifies state.
func knownState(state string) bool {
	_, ok := states[baseState(state)]
	return ok
}
