/* c2gpu parse-only <signal.h> */
#ifndef _C2GPU_SIGNAL_H
#define _C2GPU_SIGNAL_H

#include "_c2gpu_types.h"   /* pid_t */

typedef int sig_atomic_t;
typedef void (*sighandler_t)(int);
typedef struct { unsigned long _c2gpu_bits[16]; } sigset_t;

struct sigaction {
    void (*sa_handler)(int);
    sigset_t sa_mask;
    int sa_flags;
};

#define SIG_DFL ((void (*)(int))0)
#define SIG_IGN ((void (*)(int))1)
#define SIG_ERR ((void (*)(int))-1)

#define SIGHUP   1
#define SIGINT   2
#define SIGQUIT  3
#define SIGILL   4
#define SIGABRT  6
#define SIGFPE   8
#define SIGKILL  9
#define SIGSEGV 11
#define SIGPIPE 13
#define SIGALRM 14
#define SIGTERM 15
#define SIGUSR1 10
#define SIGUSR2 12

void (*signal(int sig, void (*handler)(int)))(int);
int raise(int sig);
int kill(pid_t pid, int sig);
int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);
int sigemptyset(sigset_t *set);
int sigfillset(sigset_t *set);
int sigaddset(sigset_t *set, int sig);
unsigned int alarm(unsigned int seconds);

#endif /* _C2GPU_SIGNAL_H */
