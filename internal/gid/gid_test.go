package gid_test

import (
	"sync"
	"testing"

	"github.com/petermattis/goid"
	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/locksmith-go/locksmith/internal/gid"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGetMatchesStack(t *testing.T) {
	var wg sync.WaitGroup
	ids := make([]int64, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = gid.Get()
			assert.Equal(t, gid.Slow(), ids[i])
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for _, id := range ids {
		assert.Positive(t, id)
		assert.False(t, seen[id], "goroutine ID %d returned twice", id)
		seen[id] = true
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		id   int64
		okay bool
	}{
		{"goroutine 17 [running]:\n", 17, true},
		{"goroutine 1 [", 1, true},
		{"goroutine  [running]", 0, false},
		{"gorout", 0, false},
		{"goroutine 0 [running]", 0, false},
		{"thread 3 [running]", 0, false},
	} {
		id, ok := gid.Parse([]byte(tc.in))
		assert.Equal(t, tc.okay, ok, tc.in)
		assert.Equal(t, tc.id, id, tc.in)
	}
}

// BenchmarkGet compares Get with goid.Get, which the floor lock of the
// benchmarks (testutil.FloorLock) uses.
func BenchmarkGet(b *testing.B) {
	var sum int64
	b.Run("gid.Get", func(b *testing.B) {
		for range b.N {
			sum += gid.Get()
		}
	})
	b.Run("goid.Get", func(b *testing.B) {
		for range b.N {
			sum += goid.Get()
		}
	})
	sink = sum
}

var sink int64
