//go:build gc && !purego

#include "textflag.h"

// func Goid() int64
//
// The fast path is two loads: the current g from thread-local storage and
// its goid field at offset, which init found and verified. With offset 0
// (not verified) it tail-calls SlowGoid.
TEXT ·Goid(SB),NOSPLIT,$0-8
	MOVQ ·goidOffset(SB), BX
	TESTQ BX, BX
	JEQ slow
	MOVQ (TLS), AX
	MOVQ (AX)(BX*1), AX
	MOVQ AX, ret+0(FP)
	RET
slow:
	JMP ·SlowGoid(SB)

// func getg() unsafe.Pointer
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET
