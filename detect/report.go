package detect

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind says what a Report is about.
type Kind int

const (
	// Deadlock: a cycle of goroutines, each waiting for a lock that the
	// next one holds, that the reporting goroutine was about to close.
	Deadlock Kind = iota + 1
	// LockOrder: an acquisition closed a cycle in the lock-order graph, a
	// deadlock that this run did not hit but another interleaving can.
	LockOrder
	// WaitTimeout: a goroutine has been blocked on one lock for longer
	// than the wait timeout.
	WaitTimeout
)

func (k Kind) String() string {
	switch k {
	case Deadlock:
		return "deadlock"
	case LockOrder:
		return "lock order"
	case WaitTimeout:
		return "wait timeout"
	}
	return fmt.Sprintf("detect.Kind(%d)", int(k))
}

// LockInfo names a lock in a report.
type LockInfo struct {
	ID          uint64  // the detector's ID for the lock, stable while it lives
	Name        string  // set with SetName, or ""
	Type        string  // "*mutex.Mutex" or "*monitor.Monitor"
	Addr        uintptr // the lock's address
	FirstLocked string  // "file:line" of the first Lock the detector recorded (Order mode: the first acquisition; Cycles mode: the first Lock that had to wait), or ""
}

// String returns the name and identity of the lock, for example
// `"accounts" (*mutex.Mutex 0xc000012340)` or
// `*mutex.Mutex 0xc000012340 first locked at bank.go:42`.
func (l LockInfo) String() string {
	id := fmt.Sprintf("%s %#x", l.Type, l.Addr)
	if l.Name != "" {
		return fmt.Sprintf("%q (%s)", l.Name, id)
	}
	if l.FirstLocked != "" {
		return id + " first locked at " + l.FirstLocked
	}
	return id
}

// Frame is one frame of a goroutine's stack.
type Frame struct {
	Function string
	File     string
	Line     int
}

func (f Frame) String() string { return fmt.Sprintf("%s\n\t%s:%d", f.Function, f.File, f.Line) }

// Step is one link of a reported cycle.
//
// For a Deadlock, goroutine Goroutine holds Holds and waits for WaitsFor,
// which the next step's goroutine holds (the last step's WaitsFor is held
// by the first step's goroutine); Stack is where the goroutine is now.
//
// For a LockOrder report, the step is one edge of the lock-order graph:
// Goroutine acquired WaitsFor while holding Holds, at Stack, the first time
// that edge was seen. The last step is the acquisition that closed the
// cycle.
//
// For a WaitTimeout, the first step is the waiting goroutine (WaitsFor is
// the lock) and the second is the holder (Holds is the same lock), each
// with its current stack; the holder's Stack is nil if it has exited.
type Step struct {
	Goroutine int64
	Holds     *LockInfo // nil where unknown or not applicable
	WaitsFor  *LockInfo
	Stack     []Frame
}

// Report is what the detector found, as a value.
type Report struct {
	Kind   Kind
	Steps  []Step
	Waited time.Duration // WaitTimeout only: how long the goroutine had waited
}

// String formats r for people, after jstack's "Found one Java-level
// deadlock" and lockdep's "possible circular locking dependency detected".
func (r *Report) String() string {
	var b strings.Builder
	switch r.Kind {
	case Deadlock:
		header(&b, "Found one locksmith deadlock:")
		for _, s := range r.Steps {
			fmt.Fprintf(&b, "goroutine %d:\n", s.Goroutine)
			if s.Holds != nil {
				fmt.Fprintf(&b, "  holds %s\n", s.Holds)
			}
			fmt.Fprintf(&b, "  waiting to lock %s,\n", s.WaitsFor)
			fmt.Fprintf(&b, "  which is held by goroutine %d\n", r.holderOf(s))
		}
		b.WriteString("\n")
		header(&b, "Stacks of the goroutines listed above:")
		for _, s := range r.Steps {
			stack(&b, s)
		}
	case LockOrder:
		header(&b, "WARNING: possible circular locking dependency detected")
		last := r.Steps[len(r.Steps)-1]
		fmt.Fprintf(&b, "goroutine %d is trying to acquire lock:\n  %s\n", last.Goroutine, last.WaitsFor)
		fmt.Fprintf(&b, "but it already holds lock:\n  %s\n", last.Holds)
		b.WriteString("which lock already depends on the new lock.\n\n")
		b.WriteString("the existing dependency chain is:\n\n")
		for i, s := range r.Steps[:len(r.Steps)-1] {
			fmt.Fprintf(&b, "-> #%d %s\n   then %s\n   first seen in goroutine %d at:\n", i, s.Holds, s.WaitsFor, s.Goroutine)
			frames(&b, s.Stack, "      ")
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "-> #%d %s\n   then %s\n   now, in goroutine %d at:\n", len(r.Steps)-1, last.Holds, last.WaitsFor, last.Goroutine)
		frames(&b, last.Stack, "      ")
		b.WriteString("\n possible unsafe locking scenario:\n\n")
		for i, s := range r.Steps {
			fmt.Fprintf(&b, "   path %d: lock(%s); lock(%s);\n", i+1, short(s.Holds), short(s.WaitsFor))
		}
		b.WriteString("\n *** DEADLOCK if these paths run at the same time in different goroutines ***\n")
	case WaitTimeout:
		header(&b, "locksmith: goroutine blocked on a lock for "+r.Waited.Round(time.Millisecond).String())
		w := r.Steps[0]
		fmt.Fprintf(&b, "goroutine %d has waited %v to lock %s,\n", w.Goroutine, r.Waited.Round(time.Millisecond), w.WaitsFor)
		switch {
		case len(r.Steps) > 1 && r.Steps[1].Stack == nil:
			// The holder was not in the snapshot of all goroutines.
			fmt.Fprintf(&b, "which is held by goroutine %d, which has exited (a lock held at exit stays held)\n\n", r.Steps[1].Goroutine)
		case len(r.Steps) > 1:
			fmt.Fprintf(&b, "which is held by goroutine %d\n\n", r.Steps[1].Goroutine)
		default:
			b.WriteString("which is no longer held\n\n")
		}
		for _, s := range r.Steps {
			stack(&b, s)
		}
	}
	return b.String()
}

// holderOf returns the goroutine holding the lock s waits for: the next
// step's.
func (r *Report) holderOf(s Step) int64 {
	for i, x := range r.Steps {
		if x.Goroutine == s.Goroutine {
			return r.Steps[(i+1)%len(r.Steps)].Goroutine
		}
	}
	return 0
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
	Report *Report
}

func (e *DeadlockError) Error() string {
	var b strings.Builder
	b.WriteString("detect: deadlock: ")
	for i, s := range e.Report.Steps {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "goroutine %d waits for %s held by goroutine %d", s.Goroutine, short(s.WaitsFor), e.Report.holderOf(s))
	}
	return b.String()
}

// Unwrap returns ErrDeadlock.
func (e *DeadlockError) Unwrap() error { return ErrDeadlock }
