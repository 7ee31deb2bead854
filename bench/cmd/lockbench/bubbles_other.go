//go:build !go1.25

package main

import (
	"context"
	"errors"

	"github.com/locksmith-go/locksmith/internal/testkit/stress"
)

// bubblesSupported reports whether this build can run the soak's bubble
// phases: testing/synctest needs go1.25.
const bubblesSupported = false

func runWithBubbles(context.Context, stress.Config) (stress.Result, string, error) {
	return stress.Result{}, "", errors.New("the synctest bubble phases need go1.25")
}

func runStranding(context.Context, stress.Config) (stress.Result, string, error) {
	return stress.Result{}, "", errors.New("the synctest stranding phase needs go1.25")
}
