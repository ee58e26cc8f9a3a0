/* c2gpu parse-only <unistd.h> (minimal POSIX subset) */
#ifndef _C2GPU_UNISTD_H
#define _C2GPU_UNISTD_H

#include "_c2gpu_types.h"   /* size_t, ssize_t, off_t, pid_t, useconds_t */
#include "stddef.h"

#define STDIN_FILENO  0
#define STDOUT_FILENO 1
#define STDERR_FILENO 2

#define F_OK 0
#define X_OK 1
#define W_OK 2
#define R_OK 4

#define _SC_PAGESIZE          30
#define _SC_NPROCESSORS_CONF  83
#define _SC_NPROCESSORS_ONLN  84

ssize_t read(int fd, void *buf, size_t count);
ssize_t write(int fd, const void *buf, size_t count);
int close(int fd);
off_t lseek(int fd, off_t offset, int whence);
int access(const char *path, int mode);
int unlink(const char *path);
unsigned int sleep(unsigned int seconds);
int usleep(useconds_t usec);
pid_t getpid(void);
long sysconf(int name);
char *getcwd(char *buf, size_t size);
int getopt(int argc, char *const argv[], const char *optstring);
extern char *optarg;
extern int optind, opterr, optopt;

#endif /* _C2GPU_UNISTD_H */
