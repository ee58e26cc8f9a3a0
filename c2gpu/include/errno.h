/* c2gpu parse-only <errno.h>: errno is a plain extern int here. */
#ifndef _C2GPU_ERRNO_H
#define _C2GPU_ERRNO_H

extern int errno;

#define EPERM   1
#define ENOENT  2
#define EINTR   4
#define EIO     5
#define EBADF   9
#define EAGAIN  11
#define ENOMEM  12
#define EACCES  13
#define EEXIST  17
#define EINVAL  22
#define ENOSPC  28
#define EDOM    33
#define ERANGE  34

#endif /* _C2GPU_ERRNO_H */
