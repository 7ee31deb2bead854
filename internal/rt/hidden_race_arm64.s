//go:build race && gc && !purego

#include "textflag.h"

// See hidden_race.go. Load-acquire, store-release and exclusive pairs with
// acquire-release semantics, as the runtime's atomics use without LSE.

TEXT ·HiddenLoad64(SB),NOSPLIT,$0-16
	MOVD p+0(FP), R0
	LDAR (R0), R0
	MOVD R0, ret+8(FP)
	RET

TEXT ·HiddenStore64(SB),NOSPLIT,$0-16
	MOVD p+0(FP), R0
	MOVD v+8(FP), R1
	STLR R1, (R0)
	RET

TEXT ·HiddenCas64(SB),NOSPLIT,$0-25
	MOVD p+0(FP), R0
	MOVD old+8(FP), R1
	MOVD new+16(FP), R2
again:
	LDAXR (R0), R3
	CMP R1, R3
	BNE fail
	STLXR R2, (R0), R3
	CBNZ R3, again
	MOVD $1, R0
	MOVB R0, ret+24(FP)
	RET
fail:
	CLREX
	MOVB ZR, ret+24(FP)
	RET

TEXT ·HiddenAdd64(SB),NOSPLIT,$0-24
	MOVD p+0(FP), R0
	MOVD d+8(FP), R1
again:
	LDAXR (R0), R2
	ADD R1, R2
	STLXR R2, (R0), R3
	CBNZ R3, again
	MOVD R2, ret+16(FP)
	RET

TEXT ·HiddenLoad32(SB),NOSPLIT,$0-12
	MOVD p+0(FP), R0
	LDARW (R0), R0
	MOVW R0, ret+8(FP)
	RET

TEXT ·HiddenStore32(SB),NOSPLIT,$0-12
	MOVD p+0(FP), R0
	MOVW v+8(FP), R1
	STLRW R1, (R0)
	RET

TEXT ·HiddenCas32(SB),NOSPLIT,$0-17
	MOVD p+0(FP), R0
	MOVW old+8(FP), R1
	MOVW new+12(FP), R2
again:
	LDAXRW (R0), R3
	CMPW R1, R3
	BNE fail
	STLXRW R2, (R0), R3
	CBNZ R3, again
	MOVD $1, R0
	MOVB R0, ret+16(FP)
	RET
fail:
	CLREX
	MOVB ZR, ret+16(FP)
	RET

TEXT ·HiddenAdd32(SB),NOSPLIT,$0-20
	MOVD p+0(FP), R0
	MOVW d+8(FP), R1
again:
	LDAXRW (R0), R2
	ADDW R1, R2
	STLXRW R2, (R0), R3
	CBNZ R3, again
	MOVW R2, ret+16(FP)
	RET
