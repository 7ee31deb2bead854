package detect_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
	"github.com/locksmith-go/locksmith/internal/testkit/testutil"
	"github.com/locksmith-go/locksmith/mutex"
)

// Order mode's rules for readers: an edge remembers the modes, and a cycle
// is reported once each of its locks has been write-locked somewhere (a
// read waits only for a writer). Every case runs on both read-write types.

var rwKinds = []string{"rwmutex", "rwmonitor"}

// take locks l for reading ('R') or writing ('W') and returns the unlock.
func take(l rwLock, mode byte) (unlock func()) {
	if mode == 'R' {
		l.RLock()
		return l.RUnlock
	}
	l.Lock()
	return l.Unlock
}

// nest takes x then y in the given modes on a new goroutine, releases
// both, and returns the goroutine's ID.
func nest(t *testing.T, x rwLock, mx byte, y rwLock, my byte) int64 {
	t.Helper()
	p := testutil.Spawn(func() {
		ux := take(x, mx)
		defer ux()
		take(y, my)()
	})
	require.Nil(t, p.Wait(t))
	return p.G
}

// writeAlone write-locks l on a new goroutine holding nothing else, and
// returns the goroutine's ID.
func writeAlone(t *testing.T, l rwLock) int64 {
	t.Helper()
	p := testutil.Spawn(func() { take(l, 'W')() })
	require.Nil(t, p.Wait(t))
	return p.G
}

func verb(mode byte) string {
	if mode == 'R' {
		return "rlock"
	}
	return "lock"
}

func access(mode byte) string {
	if mode == 'R' {
		return "reading"
	}
	return "writing"
}

// TestOrderRWReadOnlySharing: R(A) then R(B) in one goroutine, R(B) then
// R(A) in another, with neither lock ever write-locked, is no deadlock
// (readers never wait for readers) and is not reported; both edges are
// kept, with their modes.
func TestOrderRWReadOnlySharing(t *testing.T) {
	for _, kind := range rwKinds {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			a, b := namedRW(kind, "A"), namedRW(kind, "B")
			for range 3 {
				nest(t, a, 'R', b, 'R')
				nest(t, b, 'R', a, 'R')
			}
			assert.Empty(t, rec.All(), "%s", rec)
			fromRead, toRead, ok := detect.EdgeReads(a, b)
			assert.True(t, ok && fromRead && toRead, "edge A -> B, read on both sides")
			_, _, ok = detect.EdgeReads(b, a)
			assert.True(t, ok, "edge B -> A kept")
			assert.Empty(t, detect.OrderConsistent())
		})
	}
}

// TestOrderRWInversions: an inversion in which, at each lock, the holding
// or the acquiring side is a write is reported by the acquisition that
// closes it, and the report says how each lock was held and taken.
func TestOrderRWInversions(t *testing.T) {
	cases := []struct{ a1, b1, b2, a2 byte }{
		{'W', 'R', 'W', 'R'}, // each lock held for writing
		{'R', 'W', 'R', 'W'}, // each lock taken for writing
		{'W', 'W', 'R', 'R'}, // the first path writes both
		{'R', 'R', 'W', 'W'}, // the second path writes both
	}
	for _, kind := range rwKinds {
		for _, c := range cases {
			name := fmt.Sprintf("%s/%c(A)%c(B)-%c(B)%c(A)", kind, c.a1, c.b1, c.b2, c.a2)
			t.Run(name, func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				g1 := nest(t, a, c.a1, b, c.b1)
				require.Empty(t, rec.All(), "%s", rec)
				g2 := nest(t, b, c.b2, a, c.a2)
				reps := rec.All(detect.LockOrder)
				require.Len(t, reps, 1, "%s", rec)
				r := reps[0]
				require.Len(t, r.Steps, 2)
				s0, s1 := r.Steps[0], r.Steps[1]
				assert.Equal(t, []int64{g1, g2}, []int64{s0.Goroutine, s1.Goroutine})
				assert.Equal(t, []string{"A", "B", "B", "A"},
					[]string{detecttest.LockName(s0.Holds), detecttest.LockName(s0.WaitsFor), detecttest.LockName(s1.Holds), detecttest.LockName(s1.WaitsFor)})
				assert.Equal(t, []bool{c.a1 == 'R', c.b1 == 'R', c.b2 == 'R', c.a2 == 'R'},
					[]bool{s0.HoldsForReading, s0.WaitsForReading, s1.HoldsForReading, s1.WaitsForReading})
				text := r.String()
				t.Log(text)
				assert.Contains(t, text, fmt.Sprintf("path 1: %s(A); %s(B);", verb(c.a1), verb(c.b1)))
				assert.Contains(t, text, fmt.Sprintf("path 2: %s(B); %s(A);", verb(c.b2), verb(c.a2)))
				assert.Contains(t, text, fmt.Sprintf("goroutine %d is trying to acquire lock:\n  \"A\" (%s 0x", g2, rwType(kind)))
				assert.Contains(t, text, fmt.Sprintf(") for %s\nbut it already holds lock:\n  \"B\" (%s 0x", access(c.a2), rwType(kind)))
				assert.Contains(t, text, fmt.Sprintf("-> #0 \"A\" (%s 0x", rwType(kind)))
				assert.Contains(t, text, ", held for "+access(c.a1)+"\n")
				assert.Contains(t, text, ", taken for "+access(c.b1)+"\n")
			})
		}
	}
}

// TestOrderRWWriterPreferenceInversion: G1 takes R(A) then R(B), G2 R(B)
// then R(A), and both locks are write-locked elsewhere. With writers
// queued on A and B (writer preference holds out new readers), G1 waits
// for R(B) behind B's writer, which waits for G2, whose R(A) waits behind
// A's writer, which waits for G1: a real deadlock, reported when G2's
// R(A) closes the cycle.
func TestOrderRWWriterPreferenceInversion(t *testing.T) {
	for _, kind := range rwKinds {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			a, b := namedRW(kind, "A"), namedRW(kind, "B")
			writeAlone(t, a)
			writeAlone(t, b)
			nest(t, a, 'R', b, 'R')
			require.Empty(t, rec.All(), "%s", rec)
			nest(t, b, 'R', a, 'R')
			reps := rec.All(detect.LockOrder)
			require.Len(t, reps, 1, "%s", rec)
			for _, s := range reps[0].Steps {
				assert.True(t, s.HoldsForReading && s.WaitsForReading, "every side a read: %+v", s)
			}
			text := reps[0].String()
			t.Log(text)
			assert.Contains(t, text, "path 1: rlock(A); rlock(B);")
			assert.Contains(t, text, "path 2: rlock(B); rlock(A);")
			assert.Contains(t, text, "rlock waits only for a writer")
		})
	}
}

// TestOrderRWReadCycleLateWrite: a cycle that is not a deadlock while one
// of its locks has never been write-locked is reported when that lock is
// write-locked for the first time, by the goroutine that write-locks it,
// and only once, however often the cycle and the writes recur.
func TestOrderRWReadCycleLateWrite(t *testing.T) {
	cases := []struct {
		name           string
		a1, b1, b2, a2 byte
		before         bool // A is write-locked before B (else only B is)
	}{
		{"R(A)R(B)-R(B)R(A)", 'R', 'R', 'R', 'R', true},
		{"W(A)R(B)-R(B)W(A)", 'W', 'R', 'R', 'W', false},
		{"R(A)R(B)-R(B)W(A)", 'R', 'R', 'R', 'W', false}, // G2's W(A) waits for G1; G1's R(B) for B's writer
	}
	for _, kind := range rwKinds {
		for _, c := range cases {
			t.Run(kind+"/"+c.name, func(t *testing.T) {
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				nest(t, a, c.a1, b, c.b1)
				nest(t, b, c.b2, a, c.a2)
				if c.before {
					writeAlone(t, a)
				}
				require.Empty(t, rec.All(), "B never write-locked: %s", rec)
				g := writeAlone(t, b)
				reps := rec.All(detect.LockOrder)
				require.Len(t, reps, 1, "%s", rec)
				text := reps[0].String()
				t.Log(text)
				assert.Contains(t, text, fmt.Sprintf("goroutine %d locked \"B\" (%s 0x", g, rwType(kind)))
				assert.Contains(t, text, "for writing for the first time;")
				assert.Contains(t, (&detect.LockOrderError{Report: reps[0]}).Error(),
					fmt.Sprintf("detect: lock order inversion: goroutine %d write-locked B for the first time, which makes a cycle", g))
				assert.Contains(t, text, fmt.Sprintf("path 1: %s(A); %s(B);", verb(c.a1), verb(c.b1)))
				assert.Contains(t, text, fmt.Sprintf("path 2: %s(B); %s(A);", verb(c.b2), verb(c.a2)))

				for range 3 {
					nest(t, a, c.a1, b, c.b1)
					nest(t, b, c.b2, a, c.a2)
					writeAlone(t, a)
					writeAlone(t, b)
				}
				require.Len(t, rec.All(), 1, "%s", rec)
				assert.Equal(t, 1, reps[0].Seen().Times, "found once")
				assert.Empty(t, detect.OrderConsistent())
			})
		}
	}
}

// TestOrderRWCycleThroughPending: A -> X and X -> B, in two goroutines,
// with X only ever read, leave B -> A pending (no report: X can hold out
// no reader); A -> C and then C -> B close A -> C -> B -> A, whose locks
// have all been write-locked, through the pending edge: reported by
// C -> B.
func TestOrderRWCycleThroughPending(t *testing.T) {
	for _, kind := range rwKinds {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			a, b, c, x := namedRW(kind, "A"), namedRW(kind, "B"), namedRW(kind, "C"), namedRW(kind, "X")
			nest(t, a, 'W', x, 'R')
			nest(t, x, 'R', b, 'W')
			nest(t, b, 'W', a, 'W')
			require.Empty(t, rec.All(), "X never write-locked: %s", rec)
			nest(t, a, 'W', c, 'W')
			require.Empty(t, rec.All(), "%s", rec)
			g := nest(t, c, 'W', b, 'W')
			reps := rec.All(detect.LockOrder)
			require.Len(t, reps, 1, "%s", rec)
			r := reps[0]
			var names []string
			for _, s := range r.Steps {
				names = append(names, detecttest.LockName(s.Holds)+">"+detecttest.LockName(s.WaitsFor))
			}
			assert.Equal(t, []string{"B>A", "A>C", "C>B"}, names)
			assert.Equal(t, g, r.Steps[2].Goroutine)
			assert.Empty(t, detect.OrderConsistent())
		})
	}
}

// TestOrderRWReadHoldInBetween: holding W(A) and R(X), with X only ever
// read, and taking W(B) depends on A before B as much as on X before B:
// the edge A -> B is recorded, and B then A is reported, although the
// path A -> X -> B runs through a lock that holds out nobody.
func TestOrderRWReadHoldInBetween(t *testing.T) {
	for _, kind := range rwKinds {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			a, b, x := namedRW(kind, "A"), namedRW(kind, "B"), namedRW(kind, "X")
			p := testutil.Spawn(func() {
				a.Lock()
				defer a.Unlock()
				x.RLock()
				defer x.RUnlock()
				b.Lock()
				b.Unlock()
			})
			require.Nil(t, p.Wait(t))
			assert.True(t, detect.HasEdge(a, b), "A -> B past the read hold of X")
			nest(t, b, 'W', a, 'W')
			reps := rec.All(detect.LockOrder)
			require.Len(t, reps, 1, "%s", rec)
			assert.Len(t, reps[0].Steps, 2, "A -> B -> A")

			// Once X has been write-locked, a read hold of X passes the
			// order on like any lock: one edge per nesting.
			c, d := namedRW(kind, "C"), namedRW(kind, "D")
			writeAlone(t, x)
			p = testutil.Spawn(func() {
				c.Lock()
				defer c.Unlock()
				x.RLock()
				defer x.RUnlock()
				d.Lock()
				d.Unlock()
			})
			require.Nil(t, p.Wait(t))
			assert.True(t, detect.HasEdge(x, d))
			assert.False(t, detect.HasEdge(c, d), "no edge past a write-locked read hold")
		})
	}
}

// TestOrderRWTryRLock: TryRLock adds no edge into the lock it takes, but
// locks taken while it is held are ordered after it; an inversion against
// that order is reported once the lock has been write-locked.
func TestOrderRWTryRLock(t *testing.T) {
	for _, kind := range rwKinds {
		t.Run(kind, func(t *testing.T) {
			rec := detecttest.Configure(t, detect.WithMode(detect.Order))
			a, b, c := namedRW(kind, "A"), namedRW(kind, "B"), namedRW(kind, "C")
			holding, release := make(chan struct{}), make(chan struct{})
			p := testutil.Spawn(func() {
				a.Lock()
				defer a.Unlock()
				if !b.TryRLock() {
					panic("TryRLock of a free lock failed")
				}
				defer b.RUnlock()
				c.Lock()
				defer c.Unlock()
				close(holding)
				<-release
			})
			testutil.Await(t, holding, "locks held")
			var buf strings.Builder
			detect.Dump(&buf)
			d := buf.String()
			t.Logf("Dump:\n%s", d)
			close(release)
			require.Nil(t, p.Wait(t))
			ty := strings.ReplaceAll(rwType(kind), "*", `\*`)
			assert.Regexp(t, fmt.Sprintf(`goroutine %d holds:\n    "A" \(%s 0x[0-9a-f]+\) for writing \(hold count 1\)\n    "B" \(%s 0x[0-9a-f]+\) for reading \(readers: 1\)\n    "C" \(%s 0x[0-9a-f]+\) for writing`,
				p.G, ty, ty, ty), d)

			assert.False(t, detect.HasEdge(a, b), "no edge into the lock TryRLock took")
			fromRead, toRead, ok := detect.EdgeReads(b, c)
			assert.True(t, ok && fromRead && !toRead, "B (read) -> C (write)")
			assert.True(t, detect.HasEdge(a, c))
			require.Empty(t, rec.All(), "%s", rec)
			buf.Reset()
			require.NoError(t, detect.WriteDOT(&buf))
			checkDOT(t, buf.String())
			assert.Contains(t, buf.String(), fmt.Sprintf("\tL%d -> L%d [label=\"held for reading, taken for writing\"];\n", detect.LockID(b), detect.LockID(c)))
			assert.Contains(t, buf.String(), fmt.Sprintf("\tL%d -> L%d [label=\"held for writing, taken for writing\"];\n", detect.LockID(a), detect.LockID(c)))

			writeAlone(t, b)
			nest(t, c, 'W', b, 'R')
			reps := rec.All(detect.LockOrder)
			require.Len(t, reps, 1, "%s", rec)
			assert.Contains(t, reps[0].String(), "path 2: lock(C); rlock(B);")
		})
	}
}

// TestOrderRWReentry: an RWMonitor's re-entry (a reader reading again
// while it holds a lock taken after, the writer reading) adds no edge, so
// no false inversion; a downgraded writer holds the lock for reading, and
// its record goes with its last read hold. An RWMutex refuses re-entry
// with a panic, before any edge.
func TestOrderRWReentry(t *testing.T) {
	t.Run("rwmonitor", func(t *testing.T) {
		rec := detecttest.Configure(t, detect.WithMode(detect.Order))
		a, b, c := namedRW("rwmonitor", "A"), namedRW("rwmonitor", "B"), namedRW("rwmonitor", "C")
		writeAlone(t, a)
		p := testutil.Spawn(func() {
			a.RLock()
			b.Lock()
			a.RLock() // re-entry, which passes a queued writer
			a.RUnlock()
			b.Unlock()
			a.RUnlock()

			a.Lock()
			b.Lock()
			a.RLock() // the writer reading
			a.RUnlock()
			b.Unlock()
			a.Unlock()
		})
		require.Nil(t, p.Wait(t))
		assert.False(t, detect.HasEdge(b, a), "re-entry adds no edge")
		fromRead, toRead, ok := detect.EdgeReads(a, b)
		assert.True(t, ok && fromRead && !toRead, "A (read) -> B (write), from the first nesting")
		assert.Empty(t, rec.All(), "%s", rec)

		p = testutil.Spawn(func() {
			a.Lock()
			a.RLock()
			a.Unlock() // downgraded: a reader of A
			c.Lock()
			c.Unlock()
			a.RUnlock()
			b.Lock() // A no longer held
			b.Unlock()
		})
		require.Nil(t, p.Wait(t))
		fromRead, toRead, ok = detect.EdgeReads(a, c)
		assert.True(t, ok && fromRead && !toRead, "A (read, after the downgrade) -> C (write)")
		assert.Empty(t, rec.All(), "%s", rec)
	})
	t.Run("rwmutex", func(t *testing.T) {
		rec := detecttest.Configure(t, detect.WithMode(detect.Order))
		a, b := namedRW("rwmutex", "A"), namedRW("rwmutex", "B")
		writeAlone(t, a)
		p := testutil.Spawn(func() {
			a.RLock()
			defer a.RUnlock()
			b.Lock()
			defer b.Unlock()
			a.RLock()
		})
		assert.ErrorIs(t, p.Wait(t).(error), mutex.ErrRecursiveLock)
		_, _, ok := detect.EdgeReads(a, b)
		assert.True(t, ok, "A (read) -> B")
		assert.False(t, detect.HasEdge(b, a))
		assert.Empty(t, rec.All(), "%s", rec)
	})
}

// TestOrderReporterFailureLeavesReadFree: a LockOrder reporter that
// panics or ends the goroutine during a read acquisition must not leave
// the read hold taken: the acquisition is undone, and the goroutine holds
// nothing afterwards.
func TestOrderReporterFailureLeavesReadFree(t *testing.T) {
	for _, kind := range rwKinds {
		for _, ex := range reporterExits {
			t.Run(kind+"/"+ex.name, func(t *testing.T) {
				rec := failingReporter(t, detect.LockOrder, ex.exit)
				a, b := namedRW(kind, "A"), namedRW(kind, "B")
				nest(t, b, 'W', a, 'W')
				p := testutil.Spawn(func() {
					a.Lock()
					defer a.Unlock()
					b.RLock() // the inversion: reported, and the reporter fails
					b.RUnlock()
				})
				p.Wait(t)
				require.Len(t, rec.All(detect.LockOrder), 1, "%s", rec)
				assert.Zero(t, b.Readers(), "the read hold was undone")
				assert.Zero(t, detect.OwnerOf(a))
				writeAlone(t, b) // a writer gets in: no reader left behind
				var buf strings.Builder
				detect.Dump(&buf)
				assert.NotContains(t, buf.String(), "\"B\"", "B is held by nobody")
			})
		}
	}
}

// TestOrderRWAgainstModel runs random nestings of two or three
// read-write locks in random modes, and lone write-locks, over a few
// locks, and checks the detector against a model: the dependencies seen
// (a -> b for every lock a held while b was taken) restricted to locks
// write-locked somewhere. The first LockOrder report must come at exactly
// the step after which that graph first has a cycle: no report before (no
// false positive), none missed at that step.
func TestOrderRWAgainstModel(t *testing.T) {
	const nLocks, steps = modelLocks, 24
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	for _, kind := range rwKinds {
		t.Run(kind, func(t *testing.T) {
			for seed := range seeds {
				rng := rand.New(rand.NewPCG(uint64(seed), 11))
				rec := detecttest.Configure(t, detect.WithMode(detect.Order))
				locks := make([]rwLock, nLocks)
				for i := range locks {
					locks[i] = namedRW(kind, fmt.Sprintf("L%d", i))
				}
				var edges [nLocks][nLocks]bool
				var written [nLocks]bool
				var log []string
				modes := []byte{'R', 'R', 'W'} // mostly reads: read-only cycles form
				for range steps {
					if rng.IntN(10) == 0 {
						x := rng.IntN(nLocks)
						writeAlone(t, locks[x])
						written[x] = true
						log = append(log, fmt.Sprintf("W(L%d)", x))
					} else {
						idx := rng.Perm(nLocks)[:2+rng.IntN(2)]
						ms := make([]byte, len(idx))
						step := ""
						for i, x := range idx {
							ms[i] = modes[rng.IntN(len(modes))]
							written[x] = written[x] || ms[i] == 'W'
							for _, h := range idx[:i] {
								edges[h][x] = true
							}
							step += fmt.Sprintf("%c(L%d)", ms[i], x)
						}
						log = append(log, step)
						p := testutil.Spawn(func() {
							for i, x := range idx {
								defer take(locks[x], ms[i])()
							}
						})
						require.Nil(t, p.Wait(t))
					}
					cycle := writtenCycle(&edges, written[:])
					got := len(rec.All(detect.LockOrder)) > 0
					require.Equal(t, cycle, got, "seed %d, after %v:\n%s", seed, log, rec)
					if got {
						break
					}
				}
			}
		})
	}
}

const modelLocks = 5

// writtenCycle reports whether the graph has a cycle among written locks.
func writtenCycle(edges *[modelLocks][modelLocks]bool, written []bool) bool {
	n := len(written)
	state := make([]int, n) // 0 new, 1 on the stack, 2 done
	var visit func(int) bool
	visit = func(v int) bool {
		state[v] = 1
		for w := range n {
			if !edges[v][w] || !written[w] {
				continue
			}
			if state[w] == 1 || (state[w] == 0 && visit(w)) {
				return true
			}
		}
		state[v] = 2
		return false
	}
	for v := range n {
		if written[v] && state[v] == 0 && visit(v) {
			return true
		}
	}
	return false
}
