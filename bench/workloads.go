package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/locksmith-go/locksmith/bench/batchqueue"
	"github.com/locksmith-go/locksmith/bench/connpool"
	"github.com/locksmith-go/locksmith/condvar"
)

// CondPingPong measures n handoffs between two goroutines through a
// condvar.Cond bound to a new lock of l's kind. Each goroutine holds the
// lock (at l's Depth; Wait releases every hold and restores them) and
// waits until it is its turn, takes the turn, signals the other and waits
// again, so each handoff is one Signal, one wake-up and one lock handoff.
// The caller configures l.
func CondPingPong(l Lock, n int) Result {
	lk := l.New()
	c := condvar.New(lk)
	return pingPong(lk, l.Depth, c.Wait, c.Signal, n)
}

// SyncCondPingPong is CondPingPong on a sync.Cond and a sync.Mutex, the
// baseline for condvar.Cond.
func SyncCondPingPong(n int) Result {
	var mu sync.Mutex
	c := sync.NewCond(&mu)
	return pingPong(&mu, 1, c.Wait, c.Signal, n)
}

func pingPong(lk sync.Locker, depth int, wait, signal func(), n int) Result {
	var (
		turn  int // guarded by lk: handoffs so far
		start = make(chan struct{})
		wg    sync.WaitGroup
	)
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			enter(lk, depth)
			for {
				for turn < n && turn%2 != p {
					wait()
				}
				if turn >= n {
					break
				}
				turn++
				signal()
			}
			leave(lk, depth)
		}()
	}
	c := startClock()
	close(start)
	wg.Wait()
	return c.stop(int64(n))
}

// ChanPingPong is the same handoff done by two goroutines over a pair of
// unbuffered channels, what Go code does without a lock. n is rounded up
// to an even number.
func ChanPingPong(n int) Result {
	rounds := (n + 1) / 2
	ping, pong := make(chan struct{}), make(chan struct{})
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		for range rounds {
			ping <- struct{}{}
			<-pong
		}
	}()
	go func() {
		defer wg.Done()
		<-start
		for range rounds {
			<-ping
			pong <- struct{}{}
		}
	}()
	c := startClock()
	close(start)
	wg.Wait()
	return c.stop(int64(2 * rounds))
}

// PoolLoad is the connection-pool workload of Jetty's benchmark: some
// goroutines acquiring connections from a bounded pool, some releasing
// them, some removing them, each as fast as it can.
type PoolLoad struct {
	Acquirers int // 4 in Jetty's runs
	Releasers int // 3
	Removers  int // 1
	Capacity  int // 250
	Acquires  int // acquisitions in all, split evenly between the acquirers
}

// DefaultPoolLoad returns Jetty's shape with the given number of
// acquisitions.
func DefaultPoolLoad(acquires int) PoolLoad {
	return PoolLoad{Acquirers: 4, Releasers: 3, Removers: 1, Capacity: 250, Acquires: acquires}
}

// PoolResult is a Result whose Ops are all the pool operations, with the
// count of each kind.
type PoolResult struct {
	Result
	Acquires, Releases, Removes int64
}

// Rate returns n operations per second of r's real time.
func (r PoolResult) Rate(n int64) float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(n) / r.Wall.Seconds()
}

// Pool runs pl on a connpool.Pool guarded by a new lock of l's kind.
// Acquirers hand the connections they get to the releasers and removers
// through two buffered channels, each as large as the pool, so that
// handing over never blocks an acquirer; the channels cost every lock the
// same. The split is fixed: of every Releasers+Removers acquisitions an
// acquirer makes, Removers go to be removed (and re-dialed later; Dial is
// free), so with Jetty's shape a quarter of the connections are removed.
// The caller configures l.
func Pool(l Lock, pl PoolLoad) (PoolResult, error) {
	if pl.Acquirers <= 0 || pl.Releasers <= 0 || pl.Removers < 0 || pl.Capacity <= 0 {
		return PoolResult{}, fmt.Errorf("bench: pool load %+v needs acquirers, releasers and capacity", pl)
	}
	p := connpool.New(connpool.Config[int]{
		Capacity: pl.Capacity,
		Dial:     func(context.Context) (int, error) { return 1, nil },
		Locker:   l.New(),
	})
	defer p.Close()
	toRelease := make(chan *connpool.Conn[int], pl.Capacity)
	toRemove := make(chan *connpool.Conn[int], pl.Capacity)
	var (
		releases, removes atomic.Int64
		acquireErr        atomic.Pointer[error]
		start             = make(chan struct{})
		acquirers, takers sync.WaitGroup
	)
	ctx := context.Background()
	cycle := pl.Releasers + pl.Removers
	for i := range pl.Acquirers {
		n := pl.Acquires / pl.Acquirers
		if i < pl.Acquires%pl.Acquirers {
			n++
		}
		acquirers.Add(1)
		go func() {
			defer acquirers.Done()
			<-start
			for j := range n {
				c, err := p.Acquire(ctx)
				if err != nil {
					acquireErr.CompareAndSwap(nil, &err)
					return
				}
				if (i+j)%cycle < pl.Removers {
					toRemove <- c
				} else {
					toRelease <- c
				}
			}
		}()
	}
	taker := func(ch <-chan *connpool.Conn[int], count *atomic.Int64, give func(*connpool.Conn[int])) {
		defer takers.Done()
		<-start
		var k int64
		for c := range ch {
			give(c)
			k++
		}
		count.Add(k)
	}
	for range pl.Releasers {
		takers.Add(1)
		go taker(toRelease, &releases, p.Release)
	}
	for range pl.Removers {
		takers.Add(1)
		go taker(toRemove, &removes, p.Remove)
	}
	c := startClock()
	close(start)
	acquirers.Wait()
	close(toRelease)
	close(toRemove)
	takers.Wait()
	rel, rem := releases.Load(), removes.Load()
	acq := rel + rem
	r := PoolResult{Result: c.stop(acq + rel + rem), Acquires: acq, Releases: rel, Removes: rem}
	if e := acquireErr.Load(); e != nil {
		return r, fmt.Errorf("bench: %s pool: %w", l.Name, *e)
	}
	if acq != int64(pl.Acquires) {
		return r, fmt.Errorf("bench: %s pool: %d acquisitions handed back, want %d", l.Name, acq, pl.Acquires)
	}
	if st := p.Stats(); st.InUse != 0 || st.Total > pl.Capacity {
		return r, fmt.Errorf("bench: %s pool: after the run %+v", l.Name, st)
	}
	return r, nil
}

// BatchLoad is the batch workload: producers and consumers moving items
// through a bounded queue one at a time (Batch 1) or in batches.
type BatchLoad struct {
	Producers int
	Consumers int
	Items     int // put by each producer; the consumers share the total evenly
	Batch     int // items per Put or Take; 1 is one at a time
	Capacity  int // the queue's (or channel's) capacity in items
}

// DefaultBatchLoad returns two producers and two consumers moving 10,000
// items each in batches of batch through a queue of 1000.
func DefaultBatchLoad(batch int) BatchLoad {
	return BatchLoad{Producers: 2, Consumers: 2, Items: 10000, Batch: batch, Capacity: 1000}
}

func (bl BatchLoad) check() error {
	if bl.Producers <= 0 || bl.Consumers <= 0 || bl.Items <= 0 || bl.Batch <= 0 || bl.Capacity <= 0 {
		return fmt.Errorf("bench: batch load %+v: every field must be positive", bl)
	}
	return nil
}

// share returns how many of total items consumer i of n takes.
func share(total, n, i int) int {
	k := total / n
	if i < total%n {
		k++
	}
	return k
}

// BatchQueue runs bl through a batchqueue.Queue, a monitor.Monitor with
// two conditions, using Put and Take for batches of 1 and PutBatch and
// TakeBatch otherwise. Its Result counts items. The caller configures the
// detection mode (with a monitor.Monitor Lock's Configure).
func BatchQueue(bl BatchLoad) (Result, error) {
	if err := bl.check(); err != nil {
		return Result{}, err
	}
	q := batchqueue.New[int](bl.Capacity)
	produce := func(p int) error {
		if bl.Batch == 1 {
			for i := range bl.Items {
				if err := q.Put(p*bl.Items + i); err != nil {
					return err
				}
			}
			return nil
		}
		buf := make([]int, bl.Batch)
		for i := 0; i < bl.Items; i += bl.Batch {
			b := buf[:min(bl.Batch, bl.Items-i)]
			for j := range b {
				b[j] = p*bl.Items + i + j
			}
			if _, err := q.PutBatch(b); err != nil {
				return err
			}
		}
		return nil
	}
	consume := func(n int) (sum int, err error) {
		if bl.Batch == 1 {
			for range n {
				v, err := q.Take()
				if err != nil {
					return sum, err
				}
				sum += v
			}
			return sum, nil
		}
		buf := make([]int, bl.Batch)
		for i := 0; i < n; i += bl.Batch {
			b := buf[:min(bl.Batch, n-i)]
			if _, err := q.TakeBatch(b); err != nil {
				return sum, err
			}
			for _, v := range b {
				sum += v
			}
		}
		return sum, nil
	}
	return runBatch(bl, produce, consume, nil, q.Close)
}

// BatchChan runs bl through a buffered channel: of items for batches of 1,
// and of freshly allocated []int batches otherwise (what Go code would
// send), with room for Capacity items either way.
func BatchChan(bl BatchLoad) (Result, error) {
	if err := bl.check(); err != nil {
		return Result{}, err
	}
	if bl.Batch == 1 {
		ch := make(chan int, bl.Capacity)
		produce := func(p int) error {
			for i := range bl.Items {
				ch <- p*bl.Items + i
			}
			return nil
		}
		consume := func(n int) (sum int, err error) {
			for range n {
				v, ok := <-ch
				if !ok {
					return sum, errClosedEarly
				}
				sum += v
			}
			return sum, nil
		}
		return runBatch(bl, produce, consume, nil, func() { close(ch) })
	}
	ch := make(chan []int, max(1, bl.Capacity/bl.Batch))
	produce := func(p int) error {
		for i := 0; i < bl.Items; i += bl.Batch {
			b := make([]int, min(bl.Batch, bl.Items-i))
			for j := range b {
				b[j] = p*bl.Items + i + j
			}
			ch <- b
		}
		return nil
	}
	// A consumer takes whole batches, so its share is counted in batches.
	batches := bl.Producers * ((bl.Items + bl.Batch - 1) / bl.Batch)
	consume := func(n int) (sum int, err error) {
		for range n {
			b, ok := <-ch
			if !ok {
				return sum, errClosedEarly
			}
			for _, v := range b {
				sum += v
			}
		}
		return sum, nil
	}
	shares := func(i int) int { return share(batches, bl.Consumers, i) }
	return runBatch(bl, produce, consume, shares, func() { close(ch) })
}

var errClosedEarly = errors.New("bench: channel closed before the consumer had its share")

// runBatch starts the producers and consumers and times them. Consumer i
// is asked for shares(i) units (items, or batches for a channel of
// batches; nil means the items shared evenly). What the consumers took
// must add up to the sum of every item put. closeQueue is called once
// everything is done, or at once if a consumer fails, so that no one is
// left waiting. A producer never fails while the queue is open.
func runBatch(bl BatchLoad, produce func(p int) error, consume func(n int) (int, error), shares func(i int) int, closeQueue func()) (Result, error) {
	total := bl.Producers * bl.Items
	if shares == nil {
		shares = func(i int) int { return share(total, bl.Consumers, i) }
	}
	var (
		start      = make(chan struct{})
		wg         sync.WaitGroup
		sum        atomic.Int64
		firstErr   atomic.Pointer[error]
		recordErr  = func(err error) { firstErr.CompareAndSwap(nil, &err) }
		producing  sync.WaitGroup
		closeAfter sync.Once
	)
	for p := range bl.Producers {
		wg.Add(1)
		producing.Add(1)
		go func() {
			defer wg.Done()
			defer producing.Done()
			<-start
			if err := produce(p); err != nil {
				recordErr(err)
			}
		}()
	}
	for i := range bl.Consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := consume(shares(i))
			sum.Add(int64(s))
			if err != nil {
				recordErr(err)
				// Unblock the others rather than leave them waiting.
				closeAfter.Do(closeQueue)
			}
		}()
	}
	c := startClock()
	close(start)
	wg.Wait()
	r := c.stop(int64(total))
	closeAfter.Do(closeQueue)
	if e := firstErr.Load(); e != nil {
		return r, *e
	}
	if want := int64(total) * int64(total-1) / 2; sum.Load() != want {
		return r, fmt.Errorf("bench: batch items sum to %d, want %d", sum.Load(), want)
	}
	return r, nil
}
