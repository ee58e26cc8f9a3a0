/* c2gpu parse-only libc: shared internal type definitions (LP64, x86-64 / aarch64 Linux).
 * Every public header that needs one of these types includes this file, so each
 * typedef is written exactly once. Not for real compilation. */
#ifndef _C2GPU_TYPES_H
#define _C2GPU_TYPES_H

typedef unsigned long size_t;
typedef long ssize_t;
typedef long ptrdiff_t;
typedef int wchar_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long time_t;
typedef long clock_t;
typedef int clockid_t;
typedef long off_t;
typedef int pid_t;
typedef unsigned int useconds_t;
typedef long suseconds_t;
typedef unsigned int mode_t;
typedef unsigned long dev_t;
typedef unsigned long ino_t;
typedef unsigned long nlink_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef long blksize_t;
typedef long blkcnt_t;

/* Stand-in for the compiler's builtin va_list (no __builtin_va_list here). */
typedef char *_c2gpu_va_list;

/* Opaque stdio stream. */
typedef struct _c2gpu_FILE FILE;

#define _C2GPU_NULL ((void *)0)

#endif /* _C2GPU_TYPES_H */
