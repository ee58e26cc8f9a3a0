/* c2gpu parse-only <stdarg.h>: plain-C stand-ins for the va_* builtins. */
#ifndef _C2GPU_STDARG_H
#define _C2GPU_STDARG_H

#include "_c2gpu_types.h"

typedef _c2gpu_va_list va_list;

#define va_start(ap, last) ((void)((ap) = (va_list)&(last)))
#define va_arg(ap, type)   (*(type *)(ap))
#define va_end(ap)         ((void)(ap))
#define va_copy(dst, src)  ((void)((dst) = (src)))

#endif /* _C2GPU_STDARG_H */
