/* c2gpu parse-only <stddef.h> */
#ifndef _C2GPU_STDDEF_H
#define _C2GPU_STDDEF_H

#include "_c2gpu_types.h"

#ifndef NULL
#define NULL _C2GPU_NULL
#endif

#define offsetof(type, member) ((size_t)&(((type *)0)->member))

#endif /* _C2GPU_STDDEF_H */
