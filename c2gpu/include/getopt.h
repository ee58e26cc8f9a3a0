/* c2gpu parse-only <getopt.h> (GNU getopt_long) */
#ifndef _C2GPU_GETOPT_H
#define _C2GPU_GETOPT_H

#include "unistd.h"   /* getopt, optarg, optind, opterr, optopt */

struct option {
    const char *name;
    int has_arg;
    int *flag;
    int val;
};

#define no_argument       0
#define required_argument 1
#define optional_argument 2

int getopt_long(int argc, char *const argv[], const char *optstring, const struct option *longopts, int *longindex);
int getopt_long_only(int argc, char *const argv[], const char *optstring, const struct option *longopts,
                     int *longindex);

#endif /* _C2GPU_GETOPT_H */
