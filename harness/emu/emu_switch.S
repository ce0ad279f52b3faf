/*
 * emu_switch.S: the emulator's user-space context switch (x86-64, System V).
 *
 *   void hn_emu_switch(void **save_sp, void *new_sp)
 *       Pushes the callee-saved registers (rbp rbx r12-r15), MXCSR and the x87
 *       control word onto the current stack, stores the stack pointer in
 *       *save_sp, loads new_sp and pops the same frame from there. Caller-saved
 *       registers are dead across the call by the ABI, so nothing else needs
 *       saving; no system call is made (unlike swapcontext).
 *
 *   hn_emu_fiber_start
 *       Where a new fiber's first switch "returns" to: calls r13(r12), i.e.
 *       entry(arg), which must never return. emu_fiber_prepare builds the frame.
 *
 * Frame layout, from the saved stack pointer upward (64 bytes):
 *   [0] MXCSR (4 bytes) and x87 control word (2 bytes)
 *   [8] r15  [16] r14  [24] r13  [32] r12  [40] rbx  [48] rbp  [56] return address
 */
#if defined(__x86_64__)
    .text
    .globl  hn_emu_switch
    .hidden hn_emu_switch
    .type   hn_emu_switch, @function
    .p2align 4
hn_emu_switch:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    subq    $8, %rsp
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw   4(%rsp)
    addq    $8, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    ret
    .cfi_endproc
    .size   hn_emu_switch, .-hn_emu_switch

    .globl  hn_emu_fiber_start
    .hidden hn_emu_fiber_start
    .type   hn_emu_fiber_start, @function
    .p2align 4
hn_emu_fiber_start:
    .cfi_startproc
    /* the outermost frame of a fiber: unwinders (backtrace, gdb) stop here */
    .cfi_undefined rip
    movq    %r12, %rdi
    callq   *%r13
    ud2
    .cfi_endproc
    .size   hn_emu_fiber_start, .-hn_emu_fiber_start
#endif
    .section .note.GNU-stack,"",@progbits
