package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	assert.Equal(t, `boundedbuffer: capacity 3, 4 producers x 25 items, 3 consumers
took 100 items, sum 5050 (want 5050); never more than 3 buffered
TakeTimeout(10ms) on an empty buffer: boundedbuffer: timed out
PutTimeout(10ms) on a full buffer: boundedbuffer: timed out; still 3 items
Put blocked on a full buffer, then cancelled: context canceled; still 3 items; mutex free: true
Take: 0, <nil> (first in, first out)
`, out.String())
}

// TestTwoConditions checks that a Take wakes a blocked Put (notFull) and a
// Put wakes a blocked Take (notEmpty), with no time limit involved.
func TestTwoConditions(t *testing.T) {
	b := New(1)
	require.NoError(t, b.Put(context.Background(), 1))
	put := make(chan error, 1)
	go func() { put <- b.Put(context.Background(), 2) }()
	require.NoError(t, eventually(func() bool { return b.notFull.Waiters() == 1 }))
	v, err := b.Take(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	require.NoError(t, <-put)

	v, err = b.TakeTimeout(time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 2, v)
	took := make(chan int, 1)
	go func() { v, _ := b.Take(context.Background()); took <- v }()
	require.NoError(t, eventually(func() bool { return b.notEmpty.Waiters() == 1 }))
	require.NoError(t, b.PutTimeout(3, time.Hour))
	assert.Equal(t, 3, <-took)
	assert.False(t, b.mu.Locked())
}
