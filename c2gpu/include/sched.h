/* c2gpu parse-only <sched.h> */
#ifndef _C2GPU_SCHED_H
#define _C2GPU_SCHED_H

#include "_c2gpu_types.h"   /* pid_t, size_t */
#include "time.h"           /* struct timespec */

struct sched_param {
    int sched_priority;
};

#define SCHED_OTHER 0
#define SCHED_FIFO  1
#define SCHED_RR    2

int sched_yield(void);
int sched_getcpu(void);
int sched_get_priority_max(int policy);
int sched_get_priority_min(int policy);
int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param);

#endif /* _C2GPU_SCHED_H */
