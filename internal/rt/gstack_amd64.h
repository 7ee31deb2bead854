// GSTACK(g, lo, hi) loads the calling goroutine's g into g and its stack
// bounds, g.stack.lo and g.stack.hi, into lo and hi: the runtime's g
// begins with stack{lo, hi}. internal/fpstack's walk_amd64.s includes it;
// see doc.go for what checks it.
#define GSTACK(g, lo, hi) MOVQ (TLS), g; MOVQ 0(g), lo; MOVQ 8(g), hi
