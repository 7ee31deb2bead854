package detect

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/locksmith-go/locksmith/misuse"
)

// Kind says what a Report is about.
type Kind int

const (
	// Deadlock: a cycle of goroutines, each waiting for a lock that the
	// next one holds, that the reporting goroutine was about to close; or
	// a wait for a lock whose holder has exited holding it (the last
	// step is Exited).
	Deadlock Kind = iota + 1
	// LockOrder: an acquisition closed a cycle in the lock-order graph, a
	// deadlock that this run did not hit but another interleaving can.
	LockOrder
	// WaitTimeout: a goroutine has been blocked on one lock for longer
	// than the wait timeout.
	WaitTimeout
	// StuckWaiter: a goroutine was still blocked on a lock when the test
	// that started it ended (VerifyNone), or when the run ended
	// (VerifyTestMain).
	StuckWaiter
	// CondWait: a goroutine's Cond wait has gone unsignalled for the wait
	// timeout while goroutines have waited as long for a lock it holds (a
	// nested-monitor lockout) or for the Cond's lock (see condwatch.go).
	CondWait
	// RecoveredMisuse: a lock-contract panic that stands for a hang with
	// package sync (a recursive Lock or RLock, a read-to-write upgrade)
	// was raised inside a call that the standard library makes under a
	// recover (a String method called by fmt: see recovered.go).
	RecoveredMisuse
)

// String returns the kind in words: "deadlock", "lock order" or "wait
// timeout".
func (k Kind) String() string {
	switch k {
	case Deadlock:
		return "deadlock"
	case LockOrder:
		return "lock order"
	case WaitTimeout:
		return "wait timeout"
	case StuckWaiter:
		return "stuck waiter"
	case CondWait:
		return "cond wait"
	case RecoveredMisuse:
		return "recovered misuse"
	}
	return fmt.Sprintf("detect.Kind(%d)", int(k))
}

// LockInfo names a lock in a report.
type LockInfo struct {
	ID          uint64  // the detector's ID for the lock, stable while it lives
	Name        string  // set with SetName, or ""
	Type        string  // "*mutex.Mutex", "*monitor.Monitor", "*mutex.RWMutex" or "*monitor.RWMonitor"
	Addr        uintptr // the lock's address
	FirstLocked string  // "file:line" of the lock's first acquisition seen in Order mode, or ""
	FirstWaited string  // "file:line" of the first Lock that had to wait for it (Cycles and Order modes), or ""
	// LockedAt is "file:line" where the lock's holder (its writer, for
	// a read-write lock) took it, as the lock keeps it, when the report
	// was made and neither site above is recorded; "" otherwise.
	LockedAt string
	// ReadWrite is true for an RWMutex or RWMonitor.
	ReadWrite bool
	// Readers is, for an RWMutex or RWMonitor, the number of goroutines
	// that held it for reading when the report was made; 0 otherwise.
	Readers int
}

// String returns the name and identity of the lock, for example
// `"accounts" (*mutex.Mutex 0xc000012340)`, or, for a lock without a
// name, `*mutex.Mutex 0xc000012340 first locked at bank.go:42` (Order
// mode) or `*mutex.Mutex 0xc000012340 first waited for at bank.go:42`
// (Cycles mode, which does not see uncontended acquisitions), else
// `*mutex.Mutex 0xc000012340 locked at bank.go:42`, where its holder took
// it.
func (l LockInfo) String() string {
	id := fmt.Sprintf("%s %#x", l.Type, l.Addr)
	switch {
	case l.Name != "":
		return fmt.Sprintf("%q (%s)", l.Name, id)
	case l.FirstLocked != "":
		return id + " first locked at " + l.FirstLocked
	case l.FirstWaited != "":
		return id + " first waited for at " + l.FirstWaited
	case l.LockedAt != "":
		return id + " locked at " + l.LockedAt
	}
	return id
}

// named returns how a report's first line names the lock: its SetName
// name, or its type, address and the first of its sites recorded (first
// locked at, first waited for at, or where its holder locked it), by
// file name and line: `*mutex.Mutex 0xc000012340 (first locked at
// bank.go:42)`. Library frames are never a site: each is the user's
// frame where the lock was taken or waited for.
func (l *LockInfo) named() string {
	if l == nil {
		return "?"
	}
	if l.Name != "" {
		return l.Name
	}
	id := fmt.Sprintf("%s %#x", l.Type, l.Addr)
	switch {
	case l.FirstLocked != "":
		return id + " (first locked at " + baseSite(l.FirstLocked) + ")"
	case l.FirstWaited != "":
		return id + " (first waited for at " + baseSite(l.FirstWaited) + ")"
	case l.LockedAt != "":
		return id + " (locked at " + baseSite(l.LockedAt) + ")"
	}
	return id
}

// baseSite shortens a "file:line" site to the file's base name.
func baseSite(site string) string { return filepath.Base(site) }

// Frame is one frame of a goroutine's stack.
type Frame struct {
	Function string // the function's name, qualified by its package path, as runtime.Frame gives it
	File     string // the source file's path
	Line     int    // the line in File
}

// String formats f as runtime.Stack prints a frame: the function, then,
// on the next line, indented, file:line.
func (f Frame) String() string { return fmt.Sprintf("%s\n\t%s:%d", f.Function, f.File, f.Line) }

// Step is one link of a reported cycle.
//
// For a Deadlock, goroutine Goroutine holds Holds and waits for WaitsFor,
// which the next step's goroutine holds, or, if that step is Queued, waits
// for as a writer queued ahead of new readers (the last step's WaitsFor
// is the first step's goroutine's); Stack is where the goroutine is now.
// A Deadlock whose last step is Exited is no cycle: that step's goroutine
// has exited holding Holds, for good, and waits for nothing (WaitsFor is
// nil, Stack empty); the step before it waits for that lock.
//
// For a LockOrder report, the step is one edge of the lock-order graph:
// Goroutine acquired WaitsFor while holding Holds, at Stack, the first time
// that edge was seen, in the modes HoldsForReading and WaitsForReading
// give. The last step is the acquisition that closed the cycle (or, for a
// cycle of read locks reported when one of them was first write-locked,
// the acquisition that formed it).
//
// For a StuckWaiter, the steps are as for a WaitTimeout, each with its
// State; a holder step whose goroutine itself waits for a lock has that
// lock as its WaitsFor.
//
// For a WaitTimeout, the first step is the waiting goroutine (WaitsFor is
// the lock) and the next is the holder (Holds is the same lock), each
// with its current stack; the holder's Stack is nil if it has exited. A
// writer waiting for readers to leave has one step per reader.
//
// HoldsAt is where Goroutine acquired Holds (the user's frames, innermost
// first). For a Deadlock it is, in Order mode, the stack recorded when
// the acquisition was the first of its chain of held locks, and
// otherwise the one frame of the PC the lock keeps of its holder's
// acquisition, or of a reader's beside its reader slot (not recorded on
// the purego build's
// fast paths, and a library frame, so none, for a lock called through an
// interface such as sync.Locker). For a LockOrder report it is the Order
// mode's record of the acquisition, or, where that has no stack (a lock
// taken alone after its first lone acquisition), the same one frame, read
// when the edge was made. It is nil where that is not known.
type Step struct {
	// Goroutine is the ID of the step's goroutine, as runtime.Stack
	// prints it.
	Goroutine int64
	// Holds is the lock the goroutine holds, nil where unknown or not
	// applicable.
	Holds *LockInfo
	// WaitsFor is the lock the goroutine waits for (for a LockOrder
	// step: the lock it acquired), nil where not applicable.
	WaitsFor *LockInfo
	// HoldsForReading, for a read-write lock, says that the goroutine
	// holds Holds for reading (else for writing). A writer waits for the
	// writer and for every reader; a first-time reader waits for the
	// writer that holds the lock or waits for its readers (writer
	// preference). It is false for a Mutex or Monitor.
	HoldsForReading bool
	// WaitsForReading, for a read-write lock, says that the goroutine
	// waits to lock WaitsFor (for a LockOrder step: acquired it) for
	// reading (else for writing). It is false for a Mutex or Monitor.
	WaitsForReading bool
	// Queued, in a Deadlock step: the goroutine is a writer queued on
	// WaitsFor (Holds is the same lock). It has claimed the write lock and
	// waits for the readers to leave; first-time readers queue behind it,
	// so the previous step waits for it though it holds nothing yet.
	Queued bool
	// Cond, in the first step of a CondWait report, is the Cond the
	// goroutine waits on; Holds is then a lock it holds that the later
	// steps' goroutines wait for (directly, or behind a writer queued on
	// it), or nil if they wait for the Cond's own lock, whose holder is
	// the last step.
	Cond *CondInfo
	// Exited, in a Deadlock step: the goroutine has exited holding Holds
	// (see Step).
	Exited bool
	// Stack is the goroutine's stack without locksmith's own frames,
	// innermost first: where it is now (Deadlock, WaitTimeout), or where
	// it made the acquisition (LockOrder).
	Stack []Frame
	// HoldsAt is where the goroutine acquired Holds (see above).
	HoldsAt []Frame
	// State, in a StuckWaiter report, is the goroutine's state as
	// runtime.Stack prints it ("chan send", "sync.WaitGroup.Wait",
	// "running"), or "" if it has exited.
	State string
}

// Report is what the detector found, as a value.
//
// The detector reports each problem once: two reports with the same kind
// whose steps are at the same call sites (for a cycle, where each of its
// locks is taken: the innermost user frame of each step's stack, with its
// caller's function when the cycle's locks are taken through one
// wrapper; taken around the cycle) are one problem, whatever the lock
// instances, goroutines and callers involved. Seen counts the
// occurrences.
type Report struct {
	Kind   Kind          // what the report is about
	Mode   Mode          // the detector's mode when the report was made
	Steps  []Step        // the cycle, or the waiter and its holders (see Step)
	Waited time.Duration // WaitTimeout only: how long the goroutine had waited
	// BackedOff, for a Deadlock: the refused call was one that returns
	// without the lock instead of panicking (LockContext, LockTimeout and
	// their read forms), so that its caller backs off. The default
	// reporters print such a refusal as one line (see Report.Line).
	BackedOff bool
	// Misuse, for a RecoveredMisuse, is the contract panic's value.
	Misuse *misuse.Error
	// RecoveredBy, for a RecoveredMisuse, is the standard library
	// function whose recover swallows the panic, as runtime.Frame names
	// it: "fmt.(*pp).handleMethods" or "text/template.safeCall".
	RecoveredBy string

	tally *tally // shared by every occurrence of the problem; nil for a Report made by hand
	late  *lateWrite
	// For the recorder (recorder.go): the test function whose goroutine
	// made it, if known, and the scope of the test that claims it, once
	// claimDone.
	test      string
	claimed   *scope
	claimDone bool
}

// lateWrite says, for a LockOrder report, that the cycle formed earlier
// among read locks and became a possible deadlock when goroutine g
// write-locked lock for the first time (see pending.go).
type lateWrite struct {
	lock *LockInfo
	g    int64
}

// Seen counts the occurrences of one reported problem.
type Seen struct {
	Times      int // occurrences, the reported one included
	Locks      int // distinct lock instances involved
	Goroutines int // distinct goroutines involved (counted up to 1000)
}

// Seen returns how often the problem r describes has occurred so far: it
// goes on counting after r was reported. It is zero for a Report that the
// detector did not make.
func (r *Report) Seen() Seen {
	if r.tally == nil {
		return Seen{}
	}
	return r.tally.read()
}

// String formats r for people, after jstack's "Found one Java-level
// deadlock" and lockdep's "possible circular locking dependency detected".
func (r *Report) String() string {
	var b strings.Builder
	switch r.Kind {
	case Deadlock:
		headerNaming(&b, "Found one locksmith deadlock:", cycleLocks(r.Steps, false)...)
		for i, s := range r.Steps {
			next := r.Steps[(i+1)%len(r.Steps)]
			if s.Exited {
				exitedStep(&b, r, s)
				continue
			}
			fmt.Fprintf(&b, "goroutine %d:\n", s.Goroutine)
			if s.Holds != nil && !s.Queued {
				fmt.Fprintf(&b, "  holds %s%s\n", s.Holds, access(s.Holds, s.HoldsForReading))
				r.lockedAt(&b, s, "    ")
			}
			queued := ""
			if s.Queued {
				queued = ", queued ahead of new readers"
			}
			fmt.Fprintf(&b, "  waiting to lock %s%s%s,\n", s.WaitsFor, access(s.WaitsFor, s.WaitsForReading), queued)
			if next.Queued {
				fmt.Fprintf(&b, "  behind goroutine %d, a writer queued on it%s\n", next.Goroutine, readers(s.WaitsFor))
			} else {
				fmt.Fprintf(&b, "  which is held%s by goroutine %d%s%s\n", access(s.WaitsFor, next.HoldsForReading), next.Goroutine, exitedMark(next), readers(s.WaitsFor))
			}
		}
		r.sitesNote(&b)
		r.seenLine(&b)
		b.WriteString("\n")
		header(&b, "Stacks of the goroutines listed above:")
		for _, s := range r.Steps {
			stack(&b, s)
		}
	case LockOrder:
		headerNaming(&b, "WARNING: possible circular locking dependency detected:", cycleLocks(r.Steps, true)...)
		last := r.Steps[len(r.Steps)-1]
		if r.late != nil {
			fmt.Fprintf(&b, "goroutine %d locked %s for writing for the first time;\n", r.late.g, r.late.lock)
			b.WriteString("a writer queued on it holds out new readers, which completes a cycle of acquisitions seen before:\n")
			fmt.Fprintf(&b, "goroutine %d acquired lock:\n  %s%s\n", last.Goroutine, last.WaitsFor, access(last.WaitsFor, last.WaitsForReading))
		} else {
			fmt.Fprintf(&b, "goroutine %d is trying to acquire lock:\n  %s%s\n", last.Goroutine, last.WaitsFor, access(last.WaitsFor, last.WaitsForReading))
		}
		fmt.Fprintf(&b, "but it already holds lock:\n  %s%s\n", last.Holds, access(last.Holds, last.HoldsForReading))
		b.WriteString("which lock already depends on the new lock.\n\n")
		b.WriteString("the existing dependency chain is:\n\n")
		for i, s := range r.Steps[:len(r.Steps)-1] {
			fmt.Fprintf(&b, "-> #%d %s%s\n", i, s.Holds, heldAs(s.Holds, s.HoldsForReading))
			r.lockedAt(&b, s, "   ")
			fmt.Fprintf(&b, "   then %s%s\n   first seen in goroutine %d at:\n", s.WaitsFor, takenAs(s.WaitsFor, s.WaitsForReading), s.Goroutine)
			frames(&b, s.Stack, "      ")
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "-> #%d %s%s\n", len(r.Steps)-1, last.Holds, heldAs(last.Holds, last.HoldsForReading))
		r.lockedAt(&b, last, "   ")
		when := "now,"
		if r.late != nil {
			when = "first seen"
		}
		fmt.Fprintf(&b, "   then %s%s\n   %s in goroutine %d at:\n", last.WaitsFor, takenAs(last.WaitsFor, last.WaitsForReading), when, last.Goroutine)
		frames(&b, last.Stack, "      ")
		b.WriteString("\n possible unsafe locking scenario:\n\n")
		for i, s := range r.Steps {
			fmt.Fprintf(&b, "   path %d: %s(%s); %s(%s);", i+1, lockVerb(s.Holds, s.HoldsForReading), short(s.Holds),
				lockVerb(s.WaitsFor, s.WaitsForReading), short(s.WaitsFor))
			if len(s.Stack) > 0 {
				f := s.Stack[0]
				fmt.Fprintf(&b, " at %s:%d", f.File, f.Line)
			}
			b.WriteString("\n")
		}
		b.WriteString("\n *** DEADLOCK if these paths run at the same time in different goroutines ***\n")
		if readsIn(r.Steps) {
			b.WriteString(" (rlock waits only for a writer: every lock of the cycle is write-locked somewhere,\n" +
				"  and a writer queued on a read-locked lock holds out new readers)\n")
		}
		r.seenLine(&b)
	case CondWait:
		r.condString(&b)
	case WaitTimeout:
		w := r.Steps[0]
		headerNaming(&b, "locksmith: goroutine blocked on a lock for "+r.Waited.Round(time.Millisecond).String()+":", w.WaitsFor)
		fmt.Fprintf(&b, "goroutine %d has waited %v to lock %s%s,\n", w.Goroutine, r.Waited.Round(time.Millisecond), w.WaitsFor, access(w.WaitsFor, w.WaitsForReading))
		if len(r.Steps) == 1 {
			b.WriteString("which is no longer held\n\n")
		}
		for i, h := range r.Steps[1:] {
			lead := "which"
			if i > 0 {
				lead = "and"
			}
			if h.Stack == nil {
				// The holder was not in the snapshot of all goroutines.
				fmt.Fprintf(&b, "%s is held%s by goroutine %d, which has exited (a lock held at exit stays held)\n", lead, access(w.WaitsFor, h.HoldsForReading), h.Goroutine)
			} else {
				fmt.Fprintf(&b, "%s is held%s by goroutine %d\n", lead, access(w.WaitsFor, h.HoldsForReading), h.Goroutine)
			}
		}
		if len(r.Steps) > 1 {
			b.WriteString("\n")
		}
		for _, s := range r.Steps {
			stack(&b, s)
		}
		r.seenLine(&b)
	case StuckWaiter:
		r.stuckString(&b)
	case RecoveredMisuse:
		r.recoveredString(&b)
	}
	return b.String()
}

// Line formats r in one line: for a Deadlock, the goroutines of the
// cycle, the lock each waits for and where it waits, as the default
// reporters print a refusal that its caller backs off from; for the
// other kinds, the first line of String.
func (r *Report) Line() string {
	if r.Kind != Deadlock {
		line, _, _ := strings.Cut(r.String(), "\n")
		return line
	}
	var b strings.Builder
	b.WriteString("locksmith: refused a wait that would close a deadlock cycle; the caller backs off: ")
	for i, s := range r.Steps {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "goroutine %d waits for %s%s", s.Goroutine, s.WaitsFor.named(), access(s.WaitsFor, s.WaitsForReading))
		if len(s.Stack) > 0 {
			f := s.Stack[0]
			fmt.Fprintf(&b, " at %s:%d", f.File, f.Line)
		}
	}
	b.WriteString(" (reported once; Report.Seen counts the occurrences)")
	return b.String()
}

// lockedAt prints where s's goroutine acquired the lock it holds, when
// that is known.
func (r *Report) lockedAt(b *strings.Builder, s Step, indent string) {
	switch {
	case len(s.HoldsAt) > 0:
		f := s.HoldsAt[0]
		fmt.Fprintf(b, "%slocked at %s\n%s\t%s:%d\n", indent, f.Function, indent, f.File, f.Line)
	case r.Mode == Order:
		// Every Order-mode acquisition leaves a stack or a PC, but a PC
		// names no user frame where the lock was taken through an
		// interface or another library call, or on the purego build's
		// fast path, which records none.
		fmt.Fprintf(b, "%slocked at: no user frame (taken through an interface or a library call, or on a fast path that records no PC)\n", indent)
	}
}

// sitesNote says, once, why a report made in Cycles mode does not say
// where a goroutine took the lock it holds: a lock taken through an
// interface (the PC the lock keeps is then in a library frame), or where
// its site is not recorded (a fast path of the purego build).
func (r *Report) sitesNote(b *strings.Builder) {
	if r.Mode != Cycles {
		return // Order mode says it for each lock; Off mode makes no reports
	}
	missing, unnamed := false, false
	for _, s := range r.Steps {
		if s.Holds != nil && !s.Queued && len(s.HoldsAt) == 0 {
			missing = true
			unnamed = unnamed || s.Holds.Name == ""
		}
	}
	if !missing {
		return
	}
	b.WriteString("(where a goroutine took a lock through an interface, or by a path that records no site, is not recorded in " +
		r.Mode.String() + " mode: run with LOCKSMITH_DETECT=order to record it")
	if unnamed {
		b.WriteString(", or name the locks with detect.SetName")
	}
	b.WriteString(")\n")
}

// seenLine says how often the problem recurred, once it has.
func (r *Report) seenLine(b *strings.Builder) {
	n := r.Seen()
	if n.Times < 2 {
		return
	}
	fmt.Fprintf(b, "\n(seen %d times over %d lock instances in %d goroutines; reported once)\n", n.Times, n.Locks, n.Goroutines)
}

// access says " for reading" or " for writing" for a read-write lock, and
// nothing for a Mutex or Monitor.
func access(l *LockInfo, read bool) string {
	switch {
	case l == nil || !l.ReadWrite:
		return ""
	case read:
		return " for reading"
	}
	return " for writing"
}

// heldAs and takenAs say, in a LockOrder report, how a read-write lock
// was held or taken; lockVerb names the acquisition in the scenario lines
// ("rlock" for a read, after lockdep).
func heldAs(l *LockInfo, read bool) string {
	if a := access(l, read); a != "" {
		return ", held" + a
	}
	return ""
}

func takenAs(l *LockInfo, read bool) string {
	if a := access(l, read); a != "" {
		return ", taken" + a
	}
	return ""
}

func lockVerb(l *LockInfo, read bool) string {
	if l != nil && l.ReadWrite && read {
		return "rlock"
	}
	return "lock"
}

// readsIn reports whether a step holds or takes a lock for reading.
func readsIn(steps []Step) bool {
	for _, s := range steps {
		if (s.Holds != nil && s.Holds.ReadWrite && s.HoldsForReading) || (s.WaitsFor != nil && s.WaitsFor.ReadWrite && s.WaitsForReading) {
			return true
		}
	}
	return false
}

// readers counts the readers of a read-write lock, for the report.
func readers(l *LockInfo) string {
	if l == nil || !l.ReadWrite {
		return ""
	}
	return fmt.Sprintf(" (readers: %d)", l.Readers)
}

func short(l *LockInfo) string {
	if l == nil {
		return "?"
	}
	if l.Name != "" {
		return l.Name
	}
	return fmt.Sprintf("%#x", l.Addr)
}

func header(b *strings.Builder, s string) {
	b.WriteString(s)
	b.WriteString("\n")
	b.WriteString(strings.Repeat("=", len(s)))
	b.WriteString("\n")
}

// headerNaming writes a report's first line: title, then the locks it is
// about, each as LockInfo.named gives it (an unnamed lock by type,
// address and site), and underlines the title.
func headerNaming(b *strings.Builder, title string, locks ...*LockInfo) {
	b.WriteString(title)
	n := 0
	for _, l := range locks {
		if l == nil {
			continue // not a locksmith lock (a Cond's): nothing to name
		}
		if n > 0 {
			b.WriteString(",")
		}
		b.WriteString(" ")
		b.WriteString(l.named())
		n++
	}
	b.WriteString("\n")
	b.WriteString(strings.Repeat("=", len(title)))
	b.WriteString("\n")
}

// condLock returns the lock of the Cond that s waits on, or nil.
func condLock(s Step) *LockInfo {
	if s.Cond == nil {
		return nil
	}
	return s.Cond.Lock
}

// cycleLocks returns the distinct locks of a cycle's steps, in order:
// each step's Holds (held) or WaitsFor (!held).
func cycleLocks(steps []Step, held bool) []*LockInfo {
	var out []*LockInfo
	seen := map[uint64]bool{}
	for _, s := range steps {
		l := s.WaitsFor
		if held || s.Exited {
			l = s.Holds
		}
		if l == nil || seen[l.ID] {
			continue
		}
		seen[l.ID] = true
		out = append(out, l)
	}
	return out
}

func stack(b *strings.Builder, s Step) {
	fmt.Fprintf(b, "goroutine %d:\n", s.Goroutine)
	frames(b, s.Stack, "\t")
	b.WriteString("\n")
}

func frames(b *strings.Builder, fs []Frame, indent string) {
	if len(fs) == 0 {
		fmt.Fprintf(b, "%s(no stack: the goroutine has exited, or was not found)\n", indent)
	}
	for _, f := range fs {
		fmt.Fprintf(b, "%s%s\n%s\t%s:%d\n", indent, f.Function, indent, f.File, f.Line)
	}
}

// ErrDeadlock is matched (with errors.Is) by every *DeadlockError.
var ErrDeadlock = errors.New("deadlock")

// DeadlockError is the panic value of a Lock, and the error of a
// LockContext, that would have closed a deadlock cycle. The lock was not
// taken. Report describes the cycle.
type DeadlockError struct {
	Report *Report // the Deadlock report, as the reporter received it
}

// Error describes the cycle on one line: "detect: deadlock: goroutine 7
// waits for ... held by goroutine 9; goroutine 9 waits for ...". The
// whole report, with stacks, is Report.String().
func (e *DeadlockError) Error() string {
	var b strings.Builder
	b.WriteString("detect: deadlock: ")
	steps := e.Report.Steps
	for i, s := range steps {
		if s.Exited {
			b.WriteString(" (for good: only the holder may unlock it)")
			continue
		}
		if i > 0 {
			b.WriteString("; ")
		}
		next := steps[(i+1)%len(steps)]
		if next.Queued {
			fmt.Fprintf(&b, "goroutine %d waits for %s%s behind writer goroutine %d", s.Goroutine, s.WaitsFor.named(),
				access(s.WaitsFor, s.WaitsForReading), next.Goroutine)
			continue
		}
		fmt.Fprintf(&b, "goroutine %d waits for %s%s held%s by goroutine %d%s", s.Goroutine, s.WaitsFor.named(),
			access(s.WaitsFor, s.WaitsForReading), access(s.WaitsFor, next.HoldsForReading), next.Goroutine, exitedMark(next))
	}
	return b.String()
}

// Unwrap returns ErrDeadlock.
func (e *DeadlockError) Unwrap() error { return ErrDeadlock }

// ErrLockOrder is matched (with errors.Is) by every *LockOrderError.
var ErrLockOrder = errors.New("lock order inversion")

// LockOrderError is the panic value of PanicReporter (the default reporter
// in a test binary) for a LockOrder report: the acquisition that closed a
// cycle in the lock-order graph, a deadlock that this run did not hit but
// another interleaving can. The panic comes after the lock was taken, and
// the acquisition is undone before the panic goes on, so the Lock panics
// without the lock (see WithReporter). Report describes the cycle; Error
// includes the whole report, so that the panic prints it.
type LockOrderError struct {
	Report *Report // the LockOrder report, as the reporter received it
}

// Error returns a line naming the acquisition that closed the cycle,
// followed by the whole report (Report.String()).
func (e *LockOrderError) Error() string {
	r := e.Report
	var b strings.Builder
	b.WriteString("detect: lock order inversion")
	if r.late != nil {
		fmt.Fprintf(&b, ": goroutine %d write-locked %s for the first time, which makes a cycle of acquisitions seen before a possible deadlock",
			r.late.g, r.late.lock.named())
	} else if n := len(r.Steps); n > 0 {
		last := r.Steps[n-1]
		fmt.Fprintf(&b, ": goroutine %d locked %s while holding %s, the reverse of an order seen before",
			last.Goroutine, last.WaitsFor.named(), last.Holds.named())
	}
	if r.test != "" {
		fmt.Fprintf(&b, " (in %s)", testName(r.test))
	}
	b.WriteString("\n\n")
	b.WriteString(r.String())
	return b.String()
}

// Unwrap returns ErrLockOrder.
func (e *LockOrderError) Unwrap() error { return ErrLockOrder }
