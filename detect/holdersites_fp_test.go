//go:build gc && !purego && (amd64 || arm64) && go1.23

package detect_test

// fastSites: the fast paths record where the holder took the lock.
const fastSites = true
