package detect_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locksmith-go/locksmith/detect"
	"github.com/locksmith-go/locksmith/internal/testkit/detecttest"
)

// TestOrderConcurrentSoundness runs goroutines that nest random locks of
// every type at once, for reading and writing, by Lock, TryLock and
// LockContext with a short timeout (which gives up, or refuses a
// deadlock), while another goroutine calls Dump, WriteDOT and the
// graph's consistency check. Every LockOrder report must be a cycle of
// nestings that happened (some goroutine took the second lock while
// holding the first) through locks each write-locked somewhere; every
// Deadlock report must be answered by the refusal of the goroutine that
// closed it; and the graph stays consistent.
func TestOrderConcurrentSoundness(t *testing.T) {
	const nLocks, workers = 6, 4
	iters := 400
	if testing.Short() {
		iters = 100
	}
	for seed := range uint64(3) {
		var mu sync.Mutex // guards nested and written
		nested := map[[2]uint64]bool{}
		written := map[uint64]bool{}
		rec := detecttest.Configure(t, detect.WithMode(detect.Order))
		locks := make([]diffLock, nLocks)
		ids := make([]uint64, nLocks)
		rw := make([]bool, nLocks)
		for i := range locks {
			kind := diffKinds[(int(seed)+i)%len(diffKinds)]
			locks[i] = detecttest.Named(kind, fmt.Sprintf("L%d", i)).(diffLock)
			ids[i] = detect.LockID(locks[i])
			rw[i] = kind == "rwmutex" || kind == "rwmonitor"
			written[ids[i]] = !rw[i]
		}
		var refused atomic.Int32
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				detect.Dump(io.Discard)
				_ = detect.WriteDOT(io.Discard)
				if d := detect.OrderConsistent(); d != "" {
					t.Errorf("graph inconsistent: %s", d)
					return
				}
			}
		}()
		var workersWG sync.WaitGroup
		for w := range workers {
			workersWG.Add(1)
			go func() {
				defer workersWG.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				for range iters {
					var held []diffHeld
					for range 1 + rng.IntN(3) {
						i := rng.IntN(nLocks)
						if slicesHasSlot(held, i) {
							continue
						}
						op := "WwRr"[rng.IntN(4)]
						if !rw[i] {
							op = "Ww"[rng.IntN(2)]
						}
						mu.Lock()
						for _, h := range held {
							nested[[2]uint64{h.id, ids[i]}] = true
						}
						if !isRead(op) {
							written[ids[i]] = true
						}
						mu.Unlock()
						ok := true
						switch op {
						case 'w':
							ok = locks[i].TryLock()
						case 'r':
							ok = locks[i].(rwLock).TryRLock()
						default:
							ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+rng.IntN(3))*time.Millisecond)
							var err error
							if op == 'R' {
								err = locks[i].(rwLock).RLockContext(ctx)
							} else {
								err = lockContext(locks[i], ctx)
							}
							cancel()
							if errors.Is(err, detect.ErrDeadlock) {
								refused.Add(1)
							}
							ok = err == nil
						}
						if ok {
							held = append(held, diffHeld{slot: i, id: ids[i], op: op})
						}
					}
					for k := len(held) - 1; k >= 0; k-- {
						if isRead(held[k].op) {
							locks[held[k].slot].(rwLock).RUnlock()
						} else {
							locks[held[k].slot].Unlock()
						}
					}
				}
			}()
		}
		workersWG.Wait()
		close(stop)
		wg.Wait()
		require.Empty(t, detect.OrderConsistent())
		mu.Lock()
		deadlocks := 0
		reports := rec.All()
		for _, r := range reports {
			switch r.Kind {
			case detect.LockOrder:
				for _, s := range r.Steps {
					e := [2]uint64{s.Holds.ID, s.WaitsFor.ID}
					require.True(t, nested[e], "seed %d: %s -> %s never nested:\n%v", seed, s.Holds.Name, s.WaitsFor.Name, r)
					require.True(t, written[s.Holds.ID], "seed %d: %s never write-locked:\n%v", seed, s.Holds.Name, r)
				}
			case detect.Deadlock:
				deadlocks++
			default:
				t.Fatalf("seed %d: unexpected report\n%v", seed, r)
			}
		}
		mu.Unlock()
		t.Logf("seed %d: %d reports, %d deadlocks, %d refusals", seed, len(reports), deadlocks, refused.Load())
		// Each problem is reported once, a deadlock recurring at the same
		// sites too: at most as many reports as refusals.
		require.LessOrEqual(t, deadlocks, int(refused.Load()), "seed %d: deadlock reports without a refusal", seed)
	}
}

func slicesHasSlot(held []diffHeld, i int) bool {
	for _, h := range held {
		if h.slot == i {
			return true
		}
	}
	return false
}

// lockContext calls l's LockContext.
func lockContext(l diffLock, ctx context.Context) error {
	return l.(interface {
		LockContext(context.Context) error
	}).LockContext(ctx)
}
