/* c2gpu parse-only <malloc.h> (glibc): the stdlib.h allocators and the aligned ones */
#ifndef _C2GPU_MALLOC_H
#define _C2GPU_MALLOC_H

#include "stdlib.h"   /* malloc, calloc, realloc, free */

void *memalign(size_t alignment, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);
size_t malloc_usable_size(void *ptr);

#endif /* _C2GPU_MALLOC_H */
