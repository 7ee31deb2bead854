package fpstack_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/fpstack"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// depth is the buffer of runtime.Callers that the comparisons use, as the
// detector's captures do.
const depth = 32

// stacks holds what capture saw: Frames of Record(skip) and the frames of
// runtime.Callers(skip+1), taken on the same line.
type stacks struct{ got, want []string }

func lines(fs []runtime.Frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line)
	}
	return out
}

func callersFrames(pcs []uintptr) []runtime.Frame {
	var out []runtime.Frame
	fs := runtime.CallersFrames(pcs)
	for {
		f, more := fs.Next()
		out = append(out, f)
		if !more {
			return out
		}
	}
}

// capture records the stack both ways, skipping skip calls above it.
//
//go:noinline
func capture(skip int) stacks {
	var rec [1 + 8 + depth + 4]uintptr // 4 for wrapper frames
	var pcs [depth]uintptr
	n, m := fpstack.Record(skip, rec[:]), runtime.Callers(skip+1, pcs[:])
	return stacks{lines(fpstack.Frames(rec[:n], depth)), lines(callersFrames(pcs[:m]))}
}

// check asserts that both ways agree, and that the stack holds the frames
// of mustHave (function names, in this order, not necessarily adjacent).
func check(t *testing.T, s stacks, mustHave ...string) {
	t.Helper()
	require.NotEmpty(t, s.want)
	assert.Equal(t, s.want, s.got)
	i := 0
	for _, l := range s.got {
		if i < len(mustHave) && strings.HasPrefix(l, pkg+mustHave[i]+" ") {
			i++
		}
	}
	assert.Equal(t, len(mustHave), i, "frames %q not all in\n%s", mustHave, strings.Join(s.got, "\n"))
}

const pkg = "github.com/locksmith-go/locksmith/internal/fpstack_test."

func TestPlainCall(t *testing.T) {
	check(t, capture(0), "capture", "TestPlainCall")
	check(t, capture(1), "TestPlainCall")
}

// The inl functions are small enough to be inlined into their callers,
// so that runtime.Callers lists calls that have no frame of their own.
func inl1(skip int) stacks { return inl2(skip) }
func inl2(skip int) stacks { return inl3(skip) }
func inl3(skip int) stacks { return capture(skip) }

func TestInlinedCalls(t *testing.T) {
	for skip := range 6 {
		s := inl1(skip)
		check(t, s)
		if skip <= 3 {
			assert.Contains(t, s.got[0], []string{"capture", "inl3", "inl2", "inl1"}[skip], "skip %d", skip)
		}
	}
	// The skip ends inside a physical frame and mid-way through the
	// inlined calls in it.
	check(t, inl1(2), "inl2", "inl1", "TestInlinedCalls")
}

//go:noinline
func recurse(n, skip int) stacks {
	if n == 0 {
		return capture(skip)
	}
	return recurse(n-1, skip)
}

func TestDeepStacks(t *testing.T) {
	for _, n := range []int{depth - 5, depth, depth + 3, 2 * depth} {
		for _, skip := range []int{0, 3, 8} {
			s := recurse(n, skip)
			check(t, s, "recurse")
			if n >= depth+skip {
				assert.Len(t, s.got, depth, "n %d skip %d", n, skip)
			}
		}
	}
}

//go:noinline
func withArgs(a, b int, out *stacks, done chan<- struct{}) {
	defer close(done)
	*out = capture(a + b - 3)
}

func TestGoroutineStart(t *testing.T) {
	var s stacks
	done := make(chan struct{})
	go withArgs(1, 2, &s, done) // through a gowrap wrapper
	<-done
	check(t, s, "capture", "withArgs")
	assert.Contains(t, s.got[len(s.got)-1], "runtime.goexit")

	done = make(chan struct{})
	go func() {
		defer close(done)
		s = capture(0)
	}()
	<-done
	check(t, s, "capture", "TestGoroutineStart.func1")
}

func TestDeferredCalls(t *testing.T) {
	var s stacks
	func() {
		defer func() { s = capture(0) }()
	}()
	check(t, s, "capture", "TestDeferredCalls.func1.1", "TestDeferredCalls.func1", "TestDeferredCalls")

	func() {
		done := make(chan struct{})
		defer func() { <-done }()
		defer withArgs(1, 2, &s, done) // through a deferwrap wrapper
	}()
	check(t, s, "capture", "withArgs", "TestDeferredCalls.func2", "TestDeferredCalls")

	for range 3 { // a defer in a loop is not open-coded
		func() {
			for i := range 1 {
				defer func() { s = capture(i) }()
			}
		}()
	}
	check(t, s, "capture", "TestDeferredCalls")
}

func TestDuringPanic(t *testing.T) {
	var s stacks
	func() {
		defer func() {
			s = capture(0)
			recover()
		}()
		panic("boom")
	}()
	check(t, s, "capture", "TestDuringPanic.func1.1", "TestDuringPanic.func1", "TestDuringPanic")

	s = fault(nil)
	check(t, s, "capture", "fault.func1", "fault", "TestDuringPanic")
	var at string
	for _, l := range s.want {
		if strings.HasPrefix(l, pkg+"fault ") {
			at = l
		}
	}
	assert.True(t, strings.HasSuffix(at, fmt.Sprintf(":%d", faultLine)), "the faulting frame is at the faulting line: %s", at)
}

var sink int

// fault dereferences p (nil) on faultLine, right after a line whose last
// instruction ends where the fault's begins: runtime.Callers records the
// faulting frame by the faulting PC plus one, not by a return PC.
//
//go:noinline
func fault(p *int) (s stacks) {
	defer func() {
		s = capture(0)
		recover()
	}()
	sink++
	sink = *p
	return
}

const faultLine = 199

type value struct{}

//go:noinline
func (value) Method() stacks { return capture(0) }

//go:noinline
func (*value) PtrMethod() stacks { return capture(0) }

type methoder interface{ Method() stacks }

type embeds struct{ value }

func TestMethodsAndWrappers(t *testing.T) {
	var v methoder = &value{} // (*value).Method: a wrapper for the pointer receiver
	check(t, v.Method(), "capture", "value.Method", "TestMethodsAndWrappers")
	v = &embeds{} // the promoted method's wrapper
	check(t, v.Method(), "capture", "value.Method", "TestMethodsAndWrappers")
	f := (&value{}).PtrMethod // a method value: the -fm wrapper
	check(t, f(), "capture", "(*value).PtrMethod", "TestMethodsAndWrappers")
	g := v.Method // a method value of an interface
	check(t, g(), "capture", "value.Method", "TestMethodsAndWrappers")
}

//go:noinline
func generic[T any](x T) stacks { return capture(0) }

type box[T any] struct{ _ T }

//go:noinline
func (b box[T]) Method() stacks { return capture(0) }

func TestGenericsAndClosures(t *testing.T) {
	check(t, generic(1), "capture", "generic[...]", "TestGenericsAndClosures")
	g := generic[string] // a wrapper that passes the dictionary
	check(t, g("x"), "capture", "generic[...]", "TestGenericsAndClosures")
	var m methoder = box[int]{}
	check(t, m.Method(), "capture", "box[...].Method", "TestGenericsAndClosures")
	m = &box[string]{}
	check(t, m.Method(), "capture", "box[...].Method", "TestGenericsAndClosures")
	x := 0
	closure := func() stacks { x++; return capture(0) }
	check(t, closure(), "capture", "TestGenericsAndClosures.func1", "TestGenericsAndClosures")
	check(t, func() stacks { return closure() }(), "capture", "TestGenericsAndClosures.func1", "TestGenericsAndClosures.func2")
}

func TestRecordBounds(t *testing.T) {
	assert.Zero(t, fpstack.Record(0, nil))
	var one [1]uintptr
	require.Equal(t, 1, fpstack.Record(7, one[:]))
	assert.Empty(t, fpstack.Frames(one[:], depth))
	var two [2]uintptr
	require.Equal(t, 2, fpstack.Record(0, two[:]))
	fs := fpstack.Frames(two[:], depth)
	require.Len(t, fs, 1)
	assert.Equal(t, pkg+"TestRecordBounds", fs[0].Function)
	var rec [1 + depth]uintptr
	n := fpstack.Record(0, rec[:])
	assert.Len(t, fpstack.Frames(rec[:n], 2), 2)
	assert.Empty(t, fpstack.Frames(rec[:n], 0))
}
