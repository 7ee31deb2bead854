//go:build gc && !purego && go1.23

#include "textflag.h"
#include "../rt/gstack_arm64.h"

// func Record(skip int, rec []uintptr) int
//
// As walk_amd64.s (which says what ends the walk, and when
// recordCallers takes over), with arm64's frame layout: the return PC into the
// caller is in LR (this function saves nothing), R29 is the caller's frame
// pointer, and a frame record at fp holds the next caller's frame pointer
// at 0(fp) and the return PC into that caller at 8(fp). A Go function's
// record lies 8 bytes below its SP, so the caller's frame pointer lies
// just below this function's RSP: the bound starts 16 bytes lower.
TEXT ·Record(SB),NOSPLIT|NOFRAME,$0-40
	MOVD rec_base+8(FP), R0
	MOVD rec_len+16(FP), R1
	MOVD $0, R2            // n
	CBZ R1, done
	MOVD skip+0(FP), R5
	MOVD R5, (R0)          // rec[0] = skip
	MOVD $1, R2
	MOVBU ·walkOK(SB), R8
	CBZ R8, slow           // the start-up check found the walk wrong
	GSTACK(R3, R4)         // g.stack.lo, g.stack.hi
	SUB $16, R4, R4        // the highest frame record that fits
	MOVD LR, R5            // pc: the return PC into the caller
	MOVD R29, R6           // fp: the caller's frame pointer
	MOVD RSP, R7
	SUB $16, R7, R7        // prev: frame pointers must lie above it
loop:
	CMP R1, R2
	BGE done               // rec is full
	CBZ R5, done
	MOVD R5, (R0)(R2<<3)
	ADD $1, R2, R2
	CBZ R6, done           // the end of the goroutine's chain
	CMP R7, R6
	BLS slow               // not above the previous frame (unsigned)
	CMP R3, R6
	BLO slow               // below g.stack.lo
	CMP R4, R6
	BHI slow               // the record would end past g.stack.hi
	TST $7, R6
	BNE slow               // misaligned
	MOVD 8(R6), R5         // the return PC into the next caller
	MOVD R6, R7
	MOVD 0(R6), R6         // the next caller's frame pointer
	B loop
done:
	MOVD R2, ret+32(FP)
	RET
slow:
	JMP ·recordCallers(SB)
