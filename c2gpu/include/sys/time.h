/* c2gpu parse-only <sys/time.h> */
#ifndef _C2GPU_SYS_TIME_H
#define _C2GPU_SYS_TIME_H

#include "../_c2gpu_types.h"   /* time_t, suseconds_t */
#include "../time.h"

struct timeval {
    time_t tv_sec;
    suseconds_t tv_usec;
};

struct timezone {
    int tz_minuteswest;
    int tz_dsttime;
};

int gettimeofday(struct timeval *tv, void *tz);

#endif /* _C2GPU_SYS_TIME_H */
