// Package batchqueue is a bounded FIFO queue guarded by a monitor.Monitor
// with two conditions, "not full" and "not empty", that moves items one at
// a time (Put, Take) or in batches (PutBatch, TakeBatch).
//
// A batch takes the monitor once, not once per item: the lock's cost is
// paid per batch. A batch larger than the queue's free space or contents
// moves in chunks, waiting in between, under the same Lock. This is the
// queue of the benchmarks' batch workload, where producers and consumers
// move 10,000 items each, one at a time or in batches of 10, 100 and 1000,
// against a buffered channel.
package batchqueue
