//go:build !gc || purego || !(amd64 || arm64) || !go1.23

package mutex_test

// fastSites: the fast paths record where the holder took the lock; in
// this build (runtime.Callers), only the slow paths do.
const fastSites = false
