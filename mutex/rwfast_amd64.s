//go:build gc && !race && !purego

#include "textflag.h"
#include "go_asm.h"
#include "../internal/rt/goid_amd64.h"

// Fields of the core.RWLock inside an RWMutex.
#define STATE (RWMutex_l+const_rwStateOff)
#define PC (RWMutex_l+const_rwPCOff)
#define RS (RWMutex_l+const_rwRsOff)
#define SLOTS (RWMutex_l+const_rwSlotsOff)
#define HOLDS (RWMutex_l+const_rwHoldsOff)
#define RPCS (RWMutex_l+const_rwReaderPCsOff)

// func rwRLock(rw *RWMutex)
//
// RLockFast: if the caller's home slot (its ID mod 8) is free, the state
// word rs is 0 but for the count of displaced readers (and the caller is
// not one of them: eight compares, made only while the count is not 0),
// and no writer holds the writer lock, claim the slot with
// one CompareAndSwap, set its hold count to 1, and look at the writer
// again (the reader's half of the handshake: a writer that came in
// meanwhile sees the slot, or this sees it). If it did come in,
// rwRLockRetreat gives the slot back. Anything else, before any write,
// goes to rwRLockGo: a taken home slot (the caller's own is a recursive
// read lock, which the slow path reports), the caller displaced, a
// reader in the overflow map, a writer, a queue.
//
// The writer is looked at before the CompareAndSwap as well: a load of a
// line the CompareAndSwap needs anyway, which spares a held lock a
// CompareAndSwap and a retreat.
TEXT ·rwRLock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	MOVQ rw+0(FP), DX
	MOVQ CX, SI
	ANDQ $const_rwSlotMask, SI
	CMPQ SLOTS(DX)(SI*8), $0
	JNE slow
	MOVQ RS(DX), AX
	TESTQ AX, AX
	JNE displaced
claim:
	MOVQ STATE(DX), AX
	SHRQ $const_ownerShift, AX
	TESTQ AX, AX
	JNE slow
	XORL AX, AX
	LOCK
	CMPXCHGQ CX, SLOTS(DX)(SI*8)
	JNE slow
	MOVL $1, HOLDS(DX)(SI*4)
	MOVQ STATE(DX), AX
	SHRQ $const_ownerShift, AX
	TESTQ AX, AX
	JNE retreat
	// The reader's site (core.RWLock.SetReaderPC): RLock is inlined into
	// its caller. Stored only when it differs, as the writer's is.
	MOVQ 0(SP), AX
	CMPQ AX, RPCS(DX)(SI*8)
	JEQ done
	MOVQ AX, RPCS(DX)(SI*8)
done:
	RET
displaced:
	// Readers displaced from their home slot, and nothing else in rs:
	// the caller may be one of them (the slow path's business), else it
	// may claim its home slot as usual.
	TESTQ $(const_rwReadersWaiting|const_rwDraining), AX
	JNE slow
	SHRQ $const_rwOverflowShift, AX
	TESTQ AX, AX
	JNE slow
	CMPQ (SLOTS+0)(DX), CX
	JEQ slow
	CMPQ (SLOTS+8)(DX), CX
	JEQ slow
	CMPQ (SLOTS+16)(DX), CX
	JEQ slow
	CMPQ (SLOTS+24)(DX), CX
	JEQ slow
	CMPQ (SLOTS+32)(DX), CX
	JEQ slow
	CMPQ (SLOTS+40)(DX), CX
	JEQ slow
	CMPQ (SLOTS+48)(DX), CX
	JEQ slow
	CMPQ (SLOTS+56)(DX), CX
	JEQ slow
	JMP claim
retreat:
	JMP ·rwRLockRetreat(SB)
slow:
	JMP ·rwRLockGo(SB)

// func rwRUnlock(rw *RWMutex)
//
// RUnlockFast: if the caller's home slot holds its ID with one hold, free
// it with an exchange (a sequentially consistent store: the reader's half
// of the drain handshake) and look at the draining flag; if a writer
// waits for the readers, rwRUnlockWake wakes it. Anything else (a hold
// elsewhere, none at all) goes to rwRUnlockGo, which reports a misuse.
TEXT ·rwRUnlock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	MOVQ rw+0(FP), DX
	MOVQ CX, SI
	ANDQ $const_rwSlotMask, SI
	CMPQ SLOTS(DX)(SI*8), CX
	JNE slow
	CMPL HOLDS(DX)(SI*4), $1
	JNE slow
	XORL AX, AX
	XCHGQ AX, SLOTS(DX)(SI*8)
	TESTQ $const_rwDraining, RS(DX)
	JNE wake
	RET
wake:
	JMP ·rwRUnlockWake(SB)
slow:
	JMP ·rwRUnlockGo(SB)

// func rwLock(rw *RWMutex)
//
// LockFast: one CompareAndSwap of the writer lock's state word from 0 to
// the caller's ID, then the writer's half of the handshake: the eight
// slots and the overflow count, ORed without a branch each, must be 0.
// If the CompareAndSwap fails, rwLockHeld goes to the slow path; if
// readers are in, rwLockReaders lets the writer lock go and does.
TEXT ·rwLock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ rw+0(FP), DX
	XORL AX, AX
	LOCK
	CMPXCHGQ CX, STATE(DX)
	JNE held
	MOVQ (SLOTS+0)(DX), AX
	ORQ (SLOTS+8)(DX), AX
	ORQ (SLOTS+16)(DX), AX
	ORQ (SLOTS+24)(DX), AX
	ORQ (SLOTS+32)(DX), AX
	ORQ (SLOTS+40)(DX), AX
	ORQ (SLOTS+48)(DX), AX
	ORQ (SLOTS+56)(DX), AX
	MOVQ RS(DX), BX
	SHRQ $const_rwOverflowShift, BX
	ORQ BX, AX
	JNE readers
	MOVQ 0(SP), AX // the writer's site (core.RWLock.SetWriterPC): Lock is inlined into its caller
	MOVQ AX, PC(DX)
	RET
readers:
	JMP ·rwLockReaders(SB)
held:
	JMP ·rwLockHeld(SB)
slow:
	JMP ·rwLockGo(SB)

// func rwUnlock(rw *RWMutex)
//
// Unlock with no reader queued: one CompareAndSwap of the state word from
// the caller's ID (no writer queued) to 0, which is also the owner check,
// then a look for a reader that queued meanwhile (RWLock.Unlock's
// handshake), whom rwUnlockWake wakes. Readers queued before go to
// rwUnlockGo, which admits them before it releases; a failed
// CompareAndSwap to rwUnlockHeld.
TEXT ·rwUnlock(SB),NOSPLIT,$0-8
	MOVQ ·fastWord(SB), BX
	TESTQ BX, BX
	JEQ slow
	GOID(BX, CX)
	SHLQ $const_ownerShift, CX
	MOVQ rw+0(FP), DX
	TESTQ $const_rwReadersWaiting, RS(DX)
	JNE slow
	MOVQ CX, AX
	XORL BX, BX
	LOCK
	CMPXCHGQ BX, STATE(DX)
	JNE held
	TESTQ $const_rwReadersWaiting, RS(DX)
	JNE wake
	RET
wake:
	JMP ·rwUnlockWake(SB)
held:
	JMP ·rwUnlockHeld(SB)
slow:
	JMP ·rwUnlockGo(SB)
