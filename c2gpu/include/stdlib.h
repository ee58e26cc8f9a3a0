/* c2gpu parse-only <stdlib.h> */
#ifndef _C2GPU_STDLIB_H
#define _C2GPU_STDLIB_H

#include "_c2gpu_types.h"
#include "stddef.h"

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647

typedef struct { int quot; int rem; } div_t;
typedef struct { long quot; long rem; } ldiv_t;
typedef struct { long long quot; long long rem; } lldiv_t;

void *malloc(size_t size);
void *calloc(size_t nmemb, size_t size);
void *realloc(void *ptr, size_t size);
void free(void *ptr);
int posix_memalign(void **memptr, size_t alignment, size_t size);

void exit(int status);
void abort(void);
int atexit(void (*func)(void));
char *getenv(const char *name);
int system(const char *command);

int atoi(const char *s);
long atol(const char *s);
long long atoll(const char *s);
double atof(const char *s);
long strtol(const char *s, char **endp, int base);
unsigned long strtoul(const char *s, char **endp, int base);
long long strtoll(const char *s, char **endp, int base);
unsigned long long strtoull(const char *s, char **endp, int base);
float strtof(const char *s, char **endp);
double strtod(const char *s, char **endp);
long double strtold(const char *s, char **endp);

int rand(void);
void srand(unsigned int seed);

int abs(int j);
long labs(long j);
long long llabs(long long j);
div_t div(int num, int den);
ldiv_t ldiv(long num, long den);
lldiv_t lldiv(long long num, long long den);

void qsort(void *base, size_t nmemb, size_t size,
           int (*compar)(const void *, const void *));
void *bsearch(const void *key, const void *base, size_t nmemb, size_t size,
              int (*compar)(const void *, const void *));

#endif /* _C2GPU_STDLIB_H */
