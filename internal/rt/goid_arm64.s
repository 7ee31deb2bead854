//go:build gc && !purego

#include "textflag.h"

// func Goid() int64
//
// The fast path is two loads: the current g (register g) and its goid
// field at offset, which init found and verified. With offset 0 (not
// verified) it tail-calls SlowGoid.
TEXT ·Goid(SB),NOSPLIT,$0-8
	MOVD ·goidOffset(SB), R1
	CBZ R1, slow
	ADD g, R1, R2
	MOVD (R2), R0
	MOVD R0, ret+0(FP)
	RET
slow:
	JMP ·SlowGoid(SB)

// func getg() unsafe.Pointer
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVD g, ret+0(FP)
	RET
