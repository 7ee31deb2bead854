//go:build race && gc && !purego

#include "textflag.h"

// See hidden_race.go. On amd64 a plain load is an acquire load and an
// XCHG or LOCK-prefixed instruction a full barrier, as in sync/atomic.

TEXT ·HiddenLoad64(SB),NOSPLIT,$0-16
	MOVQ p+0(FP), AX
	MOVQ 0(AX), AX
	MOVQ AX, ret+8(FP)
	RET

TEXT ·HiddenStore64(SB),NOSPLIT,$0-16
	MOVQ p+0(FP), BX
	MOVQ v+8(FP), AX
	XCHGQ AX, 0(BX)
	RET

TEXT ·HiddenCas64(SB),NOSPLIT,$0-25
	MOVQ p+0(FP), BX
	MOVQ old+8(FP), AX
	MOVQ new+16(FP), CX
	LOCK
	CMPXCHGQ CX, 0(BX)
	SETEQ ret+24(FP)
	RET

TEXT ·HiddenAdd64(SB),NOSPLIT,$0-24
	MOVQ p+0(FP), BX
	MOVQ d+8(FP), AX
	MOVQ AX, CX
	LOCK
	XADDQ AX, 0(BX)
	ADDQ CX, AX
	MOVQ AX, ret+16(FP)
	RET

TEXT ·HiddenLoad32(SB),NOSPLIT,$0-12
	MOVQ p+0(FP), AX
	MOVL 0(AX), AX
	MOVL AX, ret+8(FP)
	RET

TEXT ·HiddenStore32(SB),NOSPLIT,$0-12
	MOVQ p+0(FP), BX
	MOVL v+8(FP), AX
	XCHGL AX, 0(BX)
	RET

TEXT ·HiddenCas32(SB),NOSPLIT,$0-17
	MOVQ p+0(FP), BX
	MOVL old+8(FP), AX
	MOVL new+12(FP), CX
	LOCK
	CMPXCHGL CX, 0(BX)
	SETEQ ret+16(FP)
	RET

TEXT ·HiddenAdd32(SB),NOSPLIT,$0-20
	MOVQ p+0(FP), BX
	MOVL d+8(FP), AX
	MOVL AX, CX
	LOCK
	XADDL AX, 0(BX)
	ADDL CX, AX
	MOVL AX, ret+16(FP)
	RET
