//go:build race && gc && (amd64 || arm64) && !purego

package rt

// Implemented in hidden_race_$GOARCH.s. Each is sequentially consistent,
// as sync/atomic's are. See hidden_race.go.

//go:noescape
func HiddenLoad64(p *int64) int64

//go:noescape
func HiddenStore64(p *int64, v int64)

//go:noescape
func HiddenCas64(p *int64, old, new int64) bool

//go:noescape
func HiddenAdd64(p *int64, d int64) int64

//go:noescape
func HiddenLoad32(p *int32) int32

//go:noescape
func HiddenStore32(p *int32, v int32)

//go:noescape
func HiddenCas32(p *int32, old, new int32) bool

//go:noescape
func HiddenAdd32(p *int32, d int32) int32
