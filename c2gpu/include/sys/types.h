/* c2gpu parse-only <sys/types.h>: the POSIX scalar types (all defined once in _c2gpu_types.h) */
#ifndef _C2GPU_SYS_TYPES_H
#define _C2GPU_SYS_TYPES_H

#include "../_c2gpu_types.h"   /* size_t, ssize_t, off_t, pid_t, mode_t, uid_t, gid_t, dev_t, ino_t, ... */

typedef unsigned char u_char;
typedef unsigned short u_short;
typedef unsigned int u_int;
typedef unsigned long u_long;

#endif /* _C2GPU_SYS_TYPES_H */
