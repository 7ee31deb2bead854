//go:build gc && !purego && (amd64 || arm64)

package detect_test

// fastSites: the fast paths record where the holder took the lock.
const fastSites = true
