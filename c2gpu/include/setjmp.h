/* c2gpu parse-only <setjmp.h>: setjmp is a function here, so a call stays visible as a call */
#ifndef _C2GPU_SETJMP_H
#define _C2GPU_SETJMP_H

typedef struct { long _c2gpu_regs[8]; int _c2gpu_mask; } jmp_buf[1];
typedef jmp_buf sigjmp_buf;

int setjmp(jmp_buf env);
void longjmp(jmp_buf env, int val);
int sigsetjmp(sigjmp_buf env, int savemask);
void siglongjmp(sigjmp_buf env, int val);

#endif /* _C2GPU_SETJMP_H */
