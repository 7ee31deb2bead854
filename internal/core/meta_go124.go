//go:build go1.24

package core

// evictMetas does nothing from go1.24 on: a Meta holds its lock weakly,
// and the scan forgets the Metas of collected locks (scanMetas). Before
// go1.24 it bounds the registry (meta_nogo124.go).
func evictMetas() {}
