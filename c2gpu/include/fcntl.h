/* c2gpu parse-only <fcntl.h> */
#ifndef _C2GPU_FCNTL_H
#define _C2GPU_FCNTL_H

#include "_c2gpu_types.h"   /* mode_t, off_t, pid_t */

#define O_RDONLY   00
#define O_WRONLY   01
#define O_RDWR     02
#define O_CREAT    0100
#define O_EXCL     0200
#define O_TRUNC    01000
#define O_APPEND   02000
#define O_NONBLOCK 04000

#define F_GETFD 1
#define F_SETFD 2
#define F_GETFL 3
#define F_SETFL 4

#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2

int open(const char *path, int flags, ...);
int creat(const char *path, mode_t mode);
int fcntl(int fd, int cmd, ...);

#endif /* _C2GPU_FCNTL_H */
