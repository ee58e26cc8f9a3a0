/* c2gpu parse-only <sys/resource.h> */
#ifndef _C2GPU_SYS_RESOURCE_H
#define _C2GPU_SYS_RESOURCE_H

#include "time.h"   /* struct timeval */

typedef unsigned long rlim_t;

struct rlimit {
    rlim_t rlim_cur;
    rlim_t rlim_max;
};

struct rusage {
    struct timeval ru_utime;
    struct timeval ru_stime;
    long ru_maxrss;
    long ru_minflt;
    long ru_majflt;
    long ru_nvcsw;
    long ru_nivcsw;
};

#define RUSAGE_SELF 0
#define RUSAGE_CHILDREN (-1)
#define RLIMIT_CPU 0
#define RLIMIT_STACK 3
#define RLIMIT_AS 9
#define RLIM_INFINITY ((rlim_t)-1)

int getrlimit(int resource, struct rlimit *rlim);
int setrlimit(int resource, const struct rlimit *rlim);
int getrusage(int who, struct rusage *usage);

#endif /* _C2GPU_SYS_RESOURCE_H */
