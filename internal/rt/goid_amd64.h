// GOID(off, reg) loads the calling goroutine's ID into reg, given in off a
// register holding the ID's offset in the runtime's g (GoidOffset, which
// must not be 0). The current g is at the top of thread-local storage, as
// goid_amd64.s reads it.
#define GOID(off, reg) MOVQ (TLS), reg; MOVQ (reg)(off*1), reg
