// Package rt holds locksmith's couplings to Go runtime internals and
// private protocols, their start-up self-checks, and the portable
// fallbacks that the purego build tag selects instead. Nothing here is
// promised by an API: each entry says what it relies on, how it checks
// itself (or why it cannot), its fallback, and what to re-check when a Go
// release lands.
//
//  1. The runtime's notify list (notifylist.go): condvar's Cond parks on
//     sync.runtime_notifyList* by //go:linkname, which the runtime keeps
//     reachable (go.dev/issue/67401), on a list of runtime.notifyList's
//     layout. Check: at start-up the list's size is checked against the
//     runtime's, as sync checks its own; a release that drops the names
//     stops the link.
//     Fallback: purego (the Cond's ticket path). Re-check: the
//     notifyList struct in runtime/sema.go and sync/runtime.go.
//  2. Nanotime (clock.go): runtime.nanotime by //go:linkname
//     (runtime/time_nofake.go keeps it for go.dev/issue/67401), real time
//     also inside synctest bubbles. Check: the link fails if it goes.
//     Fallback: purego (clock_purego*.go), gettimeofday on Unix, real
//     inside bubbles too; elsewhere time's monotonic clock, which stands
//     still inside bubbles. Re-check: the
//     linkname list of runtime/time_nofake.go.
//  3. CanSpin, DoSpin (spin.go): sync.runtime_canSpin and runtime_doSpin
//     by //go:linkname (runtime/proc.go). Check: the link. Fallback:
//     purego (spin_purego.go), spin while more than one CPU, four rounds
//     of 30 loads. Re-check: sync_runtime_canSpin's conditions in
//     runtime/proc.go.
//  4. Goid (goid_asm.go, goid_amd64.s, goid_arm64.s): the goroutine ID
//     read from the runtime's g at an offset found at start-up (the word
//     holding github.com/petermattis/goid's answer on two goroutines).
//     Check: at initialisation against runtime.Stack on two goroutines;
//     on a mismatch Goid takes the slow path and one warning goes to
//     stderr. Fallback: other platforms use goid.Get, verified the same
//     way (goid_other.go); purego parses runtime.Stack (goid_purego.go).
//     Re-check: TestLocateFindsTheIDField, maxOffset against the g's
//     goid field in runtime/runtime2.go, and update goid.
//  5. The GOID macro (goid_amd64.h), which mutex's and monitor's
//     assembly fast paths include: the same read of the g (TLS) at
//     GoidOffset, which they test for 0 first. Check: as Goid's.
//     Fallback: the Go code, under purego, -race or off amd64.
//  6. The g's stack bounds, read by internal/fpstack's frame-pointer walk
//     (walk_amd64.s, walk_arm64.s) at offsets 0 and 8 of the g
//     (g.stack.lo, g.stack.hi), and the gc ABI's frame records. The walk
//     stays an assembly function of fpstack, not a wrapper of rt, so that
//     it starts from its caller's frame whether or not a wrapper would be
//     inlined; the loads of the bounds come from rt's GSTACK macro
//     (gstack_amd64.h, gstack_arm64.h). Check: at start-up fpstack
//     compares the walk, symbolised, with runtime.Callers on two
//     goroutines (fpstack/check.go); if they differ, Record hands every
//     stack to runtime.Callers and one warning goes to stderr. Its tests
//     compare the two for every kind of frame. Fallback: runtime.Callers
//     under purego, other compilers, other architectures and Go before
//     1.23, whose inlined calls the walk misses (walk_other.go). Re-check: that stack is the g's first field, and
//     fpstack's tests.
//  7. runtime.Stack text (stack.go, states.go): goroutine headers, frames
//     and "created by" lines as runtime/traceback.go writes them, read by
//     gid's slow path, internal/core's bubble domains and detect's
//     goroutine stacks; and the table of wait states whose bubble may be
//     temporary. Check: the tests parse dumps captured from each
//     supported release (testdata/, capture_test.go); a header that does
//     not parse is skipped, a state the table does not know counts as
//     transient. No fallback: runtime.Stack is the only public source of
//     a goroutine's bubble. The bubble is read only from the bracket's
//     fields, never from GODEBUG=tracebacklabels=1's labels. Re-check:
//     goroutineheader, waitReasonStrings,
//     gStatusStrings; capture the new release's dumps.
//  8. go test's -test.testlogfile (testlog_unix.go): detect's test for
//     running under go test stats the file the go command passes, a
//     private protocol of cmd/go and testing/internal/testdeps. Check:
//     none; a change makes detect's test-mode default wrong, not unsafe.
//     Re-check: cmd/go/internal/test and testing/internal/testdeps.
//  9. Unsafe layouts: internal/core's lock words at fixed offsets for
//     the mutex and monitor assembly (core.StateOffset and the like,
//     passed through go_asm.h, so the assembler sees the compiler's
//     layout), and bubble membership read from time.Now's lack of a
//     monotonic reading inside bubbles (core's inBubble). Check: the
//     offsets are constants from unsafe.Offsetof; inBubble is checked by
//     core's bubble tests. Fallback: the Go code under purego. Re-check:
//     testing/synctest's time.Now, and core's tests.
//  10. Weak handles (weak.go): WeakCleared and WeakLoad read the handle
//     behind a weak.Pointer (its one word, the address of an atomic
//     uintptr holding the object's address, zeroed by the sweep once the
//     object is found unreachable and before its memory is reused), and
//     WeakLoad the object's words at that address as integers, so that
//     internal/core's scan for collected locks and detect's sweep of held
//     records make no lock reachable: Value shades its object while a
//     collection marks, which would hide goroutines blocked on those locks
//     from the goroutine leak profile. Check: at start-up the layout and
//     the handle's value on a fresh object; a mismatch means Value, with
//     one warning to stderr. Fallback: purego (weak_purego.go), Value.
//     Re-check: weak.Pointer in weak/pointer.go, freeSpecial and
//     internal_weak_runtime_makeStrongFromWeak in runtime/mheap.go.
//  11. Hidden atomics (hidden_race*.go, hidden_race_amd64.s,
//     hidden_race_arm64.s), race builds only: atomic operations in
//     assembly, which the race detector does not instrument, for detect's
//     goroutine table; they rely on the race detector seeing only Go code
//     and sync/atomic (the compiler instruments no assembly). Check: the
//     racehb tests under -race (internal/testkit/racehb). Fallback:
//     purego and other architectures use sync/atomic between
//     runtime.RaceDisable and RaceEnable (hidden_race_other.go). Re-check:
//     that sync/atomic's race versions are still what -race instruments.
//
// When a Go release lands: run go test ./... and -tags purego with it;
// diff the runtime files named above; capture its dumps
// (LOCKSMITH_CAPTURE=1 go test -run '^TestCapture$' ./internal/rt) and
// commit them; read the start-up warnings, if any, on stderr.
package rt
