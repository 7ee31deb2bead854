package detect_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/template"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/monitor"
	"github.com/locksmith-go/locksmith/mutex"
)

// selfLocking is a value whose String method locks its own Mutex: formatted
// while that Mutex is held, with sync.Mutex, it hangs.
type selfLocking struct {
	mu mutex.Mutex
	n  int
}

func (s *selfLocking) String() string {
	s.mu.Lock() // STRING LOCKS
	defer s.mu.Unlock()
	return fmt.Sprint(s.n)
}

// Count is the template's way in to the same recursive Lock.
func (s *selfLocking) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// rwUpgrading's String write-locks the RWMutex its caller holds for reading.
type rwUpgrading struct{ rw mutex.RWMutex }

func (u *rwUpgrading) String() string { u.rw.Lock(); defer u.rw.Unlock(); return "u" }

// TestRecoveredMisuseInStringMethod: a recursive Lock inside a String
// method that fmt calls panics, fmt recovers the panic and prints it into
// its output, and the panic is delivered as a RecoveredMisuse report
// first, naming the panic, fmt and the String method's Lock.
func TestRecoveredMisuseInStringMethod(t *testing.T) {
	for _, mode := range []detect.Mode{detect.Cycles, detect.Order} {
		t.Run(mode.String(), func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(mode))
			s := new(selfLocking)
			s.mu.Lock()
			out := fmt.Sprintf("now %v", s)
			s.mu.Unlock()
			assert.Contains(t, out, "%!v(PANIC=String method: mutex: deadlock; recursive locking")
			rs := rec.All(detect.RecoveredMisuse)
			require.Len(t, rs, 1, "%s", rec)
			r := rs[0]
			assert.Equal(t, "fmt.(*pp).handleMethods", r.RecoveredBy)
			require.NotNil(t, r.Misuse)
			assert.True(t, errors.Is(r.Misuse, mutex.ErrRecursiveLock))
			require.Len(t, r.Steps, 1)
			assert.Equal(t, testutil.GoroutineID(), r.Steps[0].Goroutine)
			require.NotEmpty(t, r.Steps[0].Stack)
			assert.Equal(t, lineOfRecovered(t, "// STRING LOCKS"), r.Steps[0].Stack[0].Line)
			text := r.String()
			assert.Contains(t, text, "is recovered by fmt")
			assert.Contains(t, text, "mutex: deadlock; recursive locking")
			assert.Contains(t, text, "with package sync the call would hang")

			// The same problem again is not delivered again; the lock is usable.
			s.mu.Lock()
			_ = fmt.Sprint(s)
			s.mu.Unlock()
			assert.Len(t, rec.All(detect.RecoveredMisuse), 1, "once per problem")
			assert.Equal(t, "0", s.String())
		})
	}
}

// TestRecoveredMisuseUpgradeAndTemplate: a read-to-write upgrade in a
// String method and a recursive Lock in a method a text/template calls
// (text/template recovers it into Execute's error) are reported too.
func TestRecoveredMisuseUpgradeAndTemplate(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	u := new(rwUpgrading)
	u.rw.RLock()
	out := fmt.Sprint(u)
	u.rw.RUnlock()
	assert.Contains(t, out, "PANIC=String method: mutex: deadlock; read-to-write upgrade")

	s := new(selfLocking)
	tmpl := template.Must(template.New("t").Parse("{{.Count}}"))
	s.mu.Lock()
	err := tmpl.Execute(new(strings.Builder), s)
	s.mu.Unlock()
	require.Error(t, err)
	assert.True(t, errors.Is(err, mutex.ErrRecursiveLock), "%v", err)

	rs := rec.All(detect.RecoveredMisuse)
	require.Len(t, rs, 2, "%s", rec)
	assert.Equal(t, "fmt.(*pp).handleMethods", rs[0].RecoveredBy)
	assert.Contains(t, rs[0].Misuse.Error(), "read-to-write upgrade")
	assert.Equal(t, "text/template.safeCall", rs[1].RecoveredBy)
	assert.Contains(t, rs[1].String(), "is recovered by text/template")
}

// TestRecoveredMisuseNotElsewhere: a recursive Lock outside fmt panics as
// always and makes no report, nor does one inside fmt in Off mode; a
// re-entrant Monitor inside a String method is no misuse at all.
func TestRecoveredMisuseNotElsewhere(t *testing.T) {
	rec := detecttest.Configure(t, detect.WithMode(detect.Cycles))
	var mu mutex.Mutex
	mu.Lock()
	v := testutil.Catch(func() { mu.Lock() })
	mu.Unlock()
	err, ok := v.(error)
	require.True(t, ok, "panic value %v", v)
	assert.True(t, errors.Is(err, mutex.ErrRecursiveLock))
	var m monitor.Monitor
	m.Lock()
	_ = fmt.Sprint(monitorString{&m})
	m.Unlock()
	assert.Empty(t, rec.All(detect.RecoveredMisuse), "%s", rec)

	off := detecttest.Configure(t, detect.WithMode(detect.Off))
	s := new(selfLocking)
	s.mu.Lock()
	out := fmt.Sprint(s)
	s.mu.Unlock()
	assert.Contains(t, out, "PANIC=String method")
	assert.Empty(t, off.All(detect.RecoveredMisuse), "Off mode makes no report")
}

type monitorString struct{ m *monitor.Monitor }

func (s monitorString) String() string { s.m.Lock(); defer s.m.Unlock(); return "m" }

// lineOfRecovered returns the line of this file that holds marker.
func lineOfRecovered(t *testing.T, marker string) int {
	t.Helper()
	src, err := os.ReadFile("recovered_test.go")
	require.NoError(t, err)
	return lineOf(t, string(src), marker)
}
