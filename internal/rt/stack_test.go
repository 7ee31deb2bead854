package rt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dumps returns the captured dumps of testdata, by file name.
func dumps(t *testing.T) map[string][]byte {
	files, err := filepath.Glob("testdata/go1.*.txt")
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[filepath.Base(f)] = b
	}
	for _, release := range []string{"go1.24", "go1.25", "go1.26"} {
		require.Contains(t, out, release+".txt", "a dump of each supported release")
	}
	return out
}

type goroutine struct {
	Header
	frames  []Frame
	created Created
}

func parseAll(dump []byte) []goroutine {
	var gs []goroutine
	for sc := Goroutines(dump); sc.Next(); {
		h, s := sc.Header, sc.Stack
		fs, c := s.Frames()
		gs = append(gs, goroutine{h, fs, c})
	}
	return gs
}

// find returns the goroutine of gs that runs fn of the capture.
func find(t *testing.T, gs []goroutine, fn string) goroutine {
	t.Helper()
	for _, g := range gs {
		for _, f := range g.frames {
			if f.Function == capturePkg+fn {
				return g
			}
		}
	}
	t.Fatalf("no goroutine runs %s", fn)
	return goroutine{}
}

// TestCapturedDumps parses the dump of each release: every header, the
// frames and "created by" line of every goroutine, and the state, thread
// and bubble of each of the capture's goroutines.
func TestCapturedDumps(t *testing.T) {
	for name, dump := range dumps(t) {
		t.Run(name, func(t *testing.T) {
			gs := parseAll(dump)
			assert.Equal(t, strings.Count(string(dump), "\ngoroutine "), len(gs), "every header parses")
			for _, g := range gs {
				require.NotEmpty(t, g.frames, "goroutine %d", g.ID)
				for _, f := range g.frames {
					assert.True(t, strings.HasSuffix(f.File, ".go") || strings.HasSuffix(f.File, ".s"), "%+v", f)
					assert.Positive(t, f.Line, "%+v", f)
					assert.NotContains(t, f.Function, "(0x", "arguments cut")
				}
				if g.ID != 1 {
					assert.NotEmpty(t, g.created.Function, "goroutine %d has a creator", g.ID)
					assert.Positive(t, g.created.By, "goroutine %d", g.ID)
					assert.Positive(t, g.created.Line)
				}
			}
			labels := strings.HasSuffix(name, "-labels.txt")
			for _, c := range captured {
				g := find(t, gs, c.fn)
				want := c.state
				if c.state == "sync.WaitGroup.Wait" && name < "go1.24" {
					want = "semacquire" // Go 1.24 gave WaitGroup.Wait a state of its own
				}
				assert.Equal(t, want, baseState(g.State), c.fn)
				assert.Equal(t, c.locked, g.Locked, c.fn)
				assert.Zero(t, g.Bubble, "%s runs outside bubbles", c.fn)
				assert.Equal(t, capturePkg+"TestCapture", g.created.Function, c.fn)
			}
			if labels {
				assert.Contains(t, string(dump), nastyLabel+`"}]:`, "the label is printed raw")
				return
			}
			if name < "go1.25" {
				return
			}
			var bubble uint64
			for _, c := range capturedInBubble {
				g := find(t, gs, c.fn)
				assert.Equal(t, c.state, baseState(g.State), c.fn)
				assert.True(t, strings.HasSuffix(g.State, " (durable)"), "%s: %s", c.fn, g.State)
				require.NotZero(t, g.Bubble, c.fn)
				if bubble == 0 {
					bubble = g.Bubble
				}
				assert.Equal(t, bubble, g.Bubble, "%s: one bubble", c.fn)
				assert.False(t, Transient(g.State), "%s: durably blocked in its bubble", c.fn)
			}
			root := find(t, gs, "captureBubble")
			var synctestRun bool
			for _, g := range gs {
				if strings.HasPrefix(g.State, "synctest.Run") {
					synctestRun = true
					assert.Equal(t, bubble, g.Bubble, "the caller of synctest.Test")
					assert.True(t, Transient(g.State))
				}
			}
			assert.True(t, synctestRun, "the caller of synctest.Test waits in synctest.Run")
			assert.Equal(t, bubble, root.Bubble)
		})
	}
}

// TestStatesClassified: every state the captured dumps show is in the
// table of transient states, one way or the other.
func TestStatesClassified(t *testing.T) {
	for name, dump := range dumps(t) {
		for sc := Goroutines(dump); sc.Next(); {
			h := sc.Header
			assert.True(t, knownState(h.State), "%s: state %q of goroutine %d is not classified", name, h.State, h.ID)
		}
	}
	for state, transient := range map[string]bool{
		"running": true, "runnable": true, "running (scan)": true, "GC assist wait": true,
		"semacquire": true, "synctest.Run (durable)": true, "force gc (idle)": true,
		"chan receive (durable)": false, "chan receive": false, "sleep (durable)": false,
		"sync.Cond.Wait (durable)": false, "GOMAXPROCS updater (idle)": false,
		"select (scan)": false, "a state of Go 1.99": true,
	} {
		assert.Equal(t, transient, Transient(state), state)
	}
	assert.False(t, knownState("a state of Go 1.99"))
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Header
		ok   bool
	}{
		{"goroutine 17 [running]:\n", Header{ID: 17, State: "running"}, true},
		{"goroutine 7 [chan receive (durable), 2 minutes, synctest bubble 12]:", Header{ID: 7, State: "chan receive (durable)", Minutes: 2, Bubble: 12}, true},
		{"goroutine 7 [select, 61 minutes, locked to thread]:", Header{ID: 7, State: "select", Minutes: 61, Locked: true}, true},
		{"goroutine 9 [sleep (scan)]:", Header{ID: 9, State: "sleep (scan)"}, true},
		{"goroutine 9 gp=0xc000007c00 m=4 mp=0xc000100008 [running, locked to thread]:", Header{ID: 9, State: "running", Locked: true}, true},
		{"goroutine 9 gp=0xc000007c00 m=nil [chan send]:", Header{ID: 9, State: "chan send"}, true},
		{"goroutine 5 [chan receive (synctest), synctest group 3]:", Header{ID: 5, State: "chan receive (synctest)", Group: 3}, true},
		// Labels (GODEBUG=tracebacklabels=1) come last and hold any printable
		// character: never a field, never the end of the bracket.
		{`goroutine 7 [select, synctest bubble 1 labels:{"k": ", synctest bubble 9"}]:`, Header{ID: 7, State: "select", Bubble: 1}, true},
		{`goroutine 8 [chan receive labels:{"k": ", synctest bubble 9]:"}]:`, Header{ID: 8, State: "chan receive"}, true},
		{`goroutine 8 [chan receive labels:{", locked to thread": ", 5 minutes, synctest bubble 4"}]:`, Header{ID: 8, State: "chan receive"}, true},
		{`goroutine 8 [running labels:{"a": "x labels:{", "b": "]:"}]:`, Header{ID: 8, State: "running"}, true},
		{"goroutine 7 [running, synctest bubble x]:", Header{ID: 7, State: "running"}, true},
		{"goroutine 7 [running", Header{ID: 7}, false},
		{"goroutine 7 []:", Header{ID: 7}, false},
		{"goroutine 7", Header{ID: 7}, false},
		{"goroutine  [running]:", Header{}, false},
		{"goroutine 0 [running]:", Header{}, false},
		{"thread 3 [running]:", Header{}, false},
	} {
		h, ok := ParseHeader([]byte(tc.line))
		assert.Equal(t, tc.ok, ok, tc.line)
		assert.Equal(t, tc.want, h, tc.line)
	}
}

// TestLabelCannotMakeABubble: with GODEBUG=tracebacklabels=1, the
// captured goroutine outside bubbles whose label reads ", synctest
// bubble 9]:" is outside bubbles.
func TestLabelCannotMakeABubble(t *testing.T) {
	dump, err := os.ReadFile("testdata/go1.26-labels.txt")
	require.NoError(t, err)
	g := find(t, parseAll(dump), "capLabelled")
	assert.Zero(t, g.Bubble)
	assert.Equal(t, "chan receive", g.State)
}

func TestGoroutineID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		id   int64
		okay bool
	}{
		{"goroutine 17 [running]:\n", 17, true},
		{"goroutine 1 [", 1, true},
		{"goroutine 1 gp=0xc0000021c0 m=0", 1, true},
		{"goroutine  [running]", 0, false},
		{"gorout", 0, false},
		{"goroutine 0 [running]", 0, false},
		{"goroutine 99999999999999999999 [running]", 0, false},
		{"thread 3 [running]", 0, false},
	} {
		id, ok := GoroutineID([]byte(tc.in))
		assert.Equal(t, tc.okay, ok, tc.in)
		assert.Equal(t, tc.id, id, tc.in)
	}
}

func TestFrames(t *testing.T) {
	dump := "goroutine 7 [chan receive]:\n" +
		"main.inlined(...)\n\t/src/a b/main.go:3\n" +
		"main.(*T).M(0xc000010000, {0x1, 0x2})\n\t/src/a b/main.go:12 +0x45 fp=0xc000 sp=0xc001 pc=0x4a\n" +
		"main.F[...](0x1)\n\t/src/main.go:20 +0x6c\n" +
		"...additional frames elided...\n" +
		"created by main.main in goroutine 1\n\t/src/main.go:30 +0x20\n\n" +
		"goroutine 8 [running]:\nmain.g()\n\t/src/main.go:40 +0x1\ncreated by main.init.0\n\t/src/main.go:41 +0x2\n\n" +
		"goroutine 1 [running]:\nmain.main()\n\t/src/main.go:50 +0x3\n"
	var got [][]Frame
	var created []Created
	for sc := Goroutines([]byte(dump)); sc.Next(); {
		fs, c := sc.Stack.Frames()
		got, created = append(got, fs), append(created, c)
	}
	require.Len(t, got, 3)
	assert.Equal(t, []Frame{
		{"main.inlined", "/src/a b/main.go", 3},
		{"main.(*T).M", "/src/a b/main.go", 12},
		{"main.F[...]", "/src/main.go", 20},
	}, got[0])
	assert.Equal(t, Created{Frame{"main.main", "/src/main.go", 30}, 1}, created[0])
	assert.Equal(t, Created{Frame{"main.init.0", "/src/main.go", 41}, 0}, created[1])
	assert.Equal(t, []Frame{{"main.main", "/src/main.go", 50}}, got[2])
	assert.Equal(t, Created{}, created[2])

	for sc := Goroutines([]byte(dump)); sc.Next(); {
		s := sc.Stack
		assert.True(t, s.HasFrame("main.(*T).M"))
		assert.False(t, s.HasFrame("main.main"), "a created by line is no frame")
		break
	}
}
