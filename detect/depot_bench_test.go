package detect

import "testing"

// BenchmarkInternHit interns a stack of 20 words that the depot holds:
// what capture costs after the walk, for a site seen before.
func BenchmarkInternHit(b *testing.B) {
	var pcs [20]uintptr
	for i := range pcs {
		pcs[i] = 0x4a0000 + uintptr(i)*0x137
	}
	want := intern(pcs[:])
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if intern(pcs[:]) != want {
			b.Fatal("the depot returned another record for the same stack")
		}
	}
}
