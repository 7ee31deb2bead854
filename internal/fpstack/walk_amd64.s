//go:build gc && !purego && go1.23

#include "textflag.h"
#include "../rt/gstack_amd64.h"

// func Record(skip int, rec []uintptr) int
//
// The walk runs in registers, with no frame of its own: BP is still the
// caller's frame pointer and 0(SP) the return PC into the caller. A frame
// record at fp holds the next caller's frame pointer at 0(fp) and the
// return PC into that caller at 8(fp). The chain of a goroutine ends with
// a zero frame pointer, saved by the function it started with. The walk
// follows a frame pointer only if it lies within the goroutine's stack
// (g.stack.lo <= fp and fp+16 <= g.stack.hi; the runtime's g begins with
// stack{lo, hi}), above the previous one, and 8-byte aligned; any other
// (the system-stack frame pointer that a cgo callback's entry saved, a
// garbage word) ends the walk before it is read, and Record gives the
// stack to recordCallers (a tail call: recordCallers returns to Record's
// caller, with Record's arguments), as it does every stack if
// the start-up check found the walk wrong (walkOK false, check.go). The
// loads of g.stack come from internal/rt's GSTACK macro. Assembly is not preempted
// asynchronously and this function never grows the stack (NOSPLIT, no
// frame), so the stack cannot move during the walk.
TEXT ·Record(SB),NOSPLIT,$0-40
	MOVQ rec_base+8(FP), DI
	MOVQ rec_len+16(FP), CX
	XORQ AX, AX            // n
	TESTQ CX, CX
	JEQ done
	MOVQ skip+0(FP), DX
	MOVQ DX, (DI)          // rec[0] = skip
	MOVQ $1, AX
	CMPB ·walkOK(SB), $0
	JEQ slow               // the start-up check found the walk wrong
	GSTACK(R9, R10, R11)   // g, g.stack.lo, g.stack.hi
	SUBQ $16, R11          // the highest frame record that fits
	MOVQ 0(SP), DX         // pc: the return PC into the caller
	MOVQ BP, SI            // fp: the caller's frame pointer
	MOVQ SP, BX            // prev: frame pointers must lie above it
loop:
	CMPQ AX, CX
	JGE done               // rec is full
	TESTQ DX, DX
	JEQ done
	MOVQ DX, (DI)(AX*8)
	INCQ AX
	TESTQ SI, SI
	JEQ done               // the end of the goroutine's chain
	CMPQ SI, BX
	JLS slow               // not above the previous frame (unsigned)
	CMPQ SI, R10
	JCS slow               // below g.stack.lo
	CMPQ SI, R11
	JHI slow               // the record would end past g.stack.hi
	TESTQ $7, SI
	JNE slow               // misaligned
	MOVQ 8(SI), DX         // the return PC into the next caller
	MOVQ SI, BX
	MOVQ 0(SI), SI         // the next caller's frame pointer
	JMP loop
done:
	MOVQ AX, ret+32(FP)
	RET
slow:
	JMP ·recordCallers(SB)

// func recordFrom(fp uintptr, rec []uintptr) int
//
// Record with the caller's frame pointer replaced by fp, for the tests of
// the walk's bounds. The epilogue restores BP from the frame.
TEXT ·recordFrom(SB),NOSPLIT,$40-40
	MOVQ fp+0(FP), BP
	MOVQ $0, 0(SP)
	MOVQ rec_base+8(FP), AX
	MOVQ AX, 8(SP)
	MOVQ rec_len+16(FP), AX
	MOVQ AX, 16(SP)
	MOVQ rec_cap+24(FP), AX
	MOVQ AX, 24(SP)
	CALL ·Record(SB)
	MOVQ 32(SP), AX
	MOVQ AX, ret+32(FP)
	RET
