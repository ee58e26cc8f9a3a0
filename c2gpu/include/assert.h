/* c2gpu parse-only <assert.h>. assert is declared as a function so that an
 * assertion inside a loop stays a recognisable call named "assert" in the AST
 * (CUDA device code supports assert). No include guard on the NDEBUG part, as
 * in the standard: each inclusion re-reads NDEBUG. */
#undef assert
#ifdef NDEBUG
#define assert(expr) ((void)0)
#else
#ifndef _C2GPU_ASSERT_DECLARED
#define _C2GPU_ASSERT_DECLARED
void assert(int expression);
#endif
#endif
