/* c2gpu parse-only <time.h> (with the POSIX clock_gettime part) */
#ifndef _C2GPU_TIME_H
#define _C2GPU_TIME_H

#include "_c2gpu_types.h"   /* time_t, clock_t, clockid_t, size_t */
#include "stddef.h"

#define CLOCKS_PER_SEC ((clock_t)1000000)

#define CLOCK_REALTIME           0
#define CLOCK_MONOTONIC          1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID  3

struct timespec {
    time_t tv_sec;
    long tv_nsec;
};

struct tm {
    int tm_sec;
    int tm_min;
    int tm_hour;
    int tm_mday;
    int tm_mon;
    int tm_year;
    int tm_wday;
    int tm_yday;
    int tm_isdst;
};

clock_t clock(void);
time_t time(time_t *t);
double difftime(time_t end, time_t start);
time_t mktime(struct tm *tm);
struct tm *localtime(const time_t *t);
struct tm *gmtime(const time_t *t);
char *asctime(const struct tm *tm);
char *ctime(const time_t *t);
size_t strftime(char *s, size_t max, const char *format, const struct tm *tm);

int clock_gettime(clockid_t clk, struct timespec *tp);
int clock_getres(clockid_t clk, struct timespec *res);
int nanosleep(const struct timespec *req, struct timespec *rem);

#endif /* _C2GPU_TIME_H */
