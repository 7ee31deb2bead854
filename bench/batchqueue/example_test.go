package batchqueue_test

import (
	"errors"
	"fmt"

	"github.com/locksmith-go/locksmith/bench/batchqueue"
)

func ExampleQueue() {
	q := batchqueue.New[string](2)
	go func() {
		for _, s := range []string{"a", "b", "c"} {
			_ = q.Put(s) // waits while the queue is full
		}
		q.Close()
	}()
	for {
		s, err := q.Take()
		if errors.Is(err, batchqueue.ErrClosed) {
			break // closed and drained
		}
		fmt.Println(s)
	}
	// Output:
	// a
	// b
	// c
}

func ExampleQueue_PutBatch() {
	q := batchqueue.New[int](4)
	put := make(chan string)
	go func() {
		// Ten items through a queue of four: three chunks, one Lock.
		n, err := q.PutBatch([]int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
		put <- fmt.Sprint("put ", n, " ", err)
	}()
	dst := make([]int, 5)
	for range 2 {
		n, _ := q.TakeBatch(dst) // fills dst, waiting as needed
		fmt.Println(dst[:n])
	}
	fmt.Println(<-put)
	// Output:
	// [0 1 2 3 4]
	// [5 6 7 8 9]
	// put 10 <nil>
}
