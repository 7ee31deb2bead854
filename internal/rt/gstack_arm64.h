// GSTACK(lo, hi) loads the calling goroutine's stack bounds, g.stack.lo
// and g.stack.hi, into lo and hi: the runtime's g (register g) begins
// with stack{lo, hi}. internal/fpstack's walk_arm64.s includes it; see
// doc.go for what checks it.
#define GSTACK(lo, hi) MOVD 0(g), lo; MOVD 8(g), hi
