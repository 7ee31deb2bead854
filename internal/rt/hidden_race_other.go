//go:build race && !(gc && (amd64 || arm64) && !purego)

package rt

import (
	"runtime"
	"sync/atomic"
)

// See hidden_race.go: here the memory accesses stay visible to the race
// detector, but every access to what these guard is //go:norace code.

func HiddenLoad64(p *int64) int64 {
	runtime.RaceDisable()
	v := atomic.LoadInt64(p)
	runtime.RaceEnable()
	return v
}

func HiddenStore64(p *int64, v int64) {
	runtime.RaceDisable()
	atomic.StoreInt64(p, v)
	runtime.RaceEnable()
}

func HiddenCas64(p *int64, old, new int64) bool {
	runtime.RaceDisable()
	ok := atomic.CompareAndSwapInt64(p, old, new)
	runtime.RaceEnable()
	return ok
}

func HiddenAdd64(p *int64, d int64) int64 {
	runtime.RaceDisable()
	v := atomic.AddInt64(p, d)
	runtime.RaceEnable()
	return v
}

func HiddenLoad32(p *int32) int32 {
	runtime.RaceDisable()
	v := atomic.LoadInt32(p)
	runtime.RaceEnable()
	return v
}

func HiddenStore32(p *int32, v int32) {
	runtime.RaceDisable()
	atomic.StoreInt32(p, v)
	runtime.RaceEnable()
}

func HiddenCas32(p *int32, old, new int32) bool {
	runtime.RaceDisable()
	ok := atomic.CompareAndSwapInt32(p, old, new)
	runtime.RaceEnable()
	return ok
}

func HiddenAdd32(p *int32, d int32) int32 {
	runtime.RaceDisable()
	v := atomic.AddInt32(p, d)
	runtime.RaceEnable()
	return v
}
