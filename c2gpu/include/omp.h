/* c2gpu parse-only <omp.h>: the OpenMP runtime routines, so OpenMP programs (DataRaceBench) parse.
   c2gpu analyses the sequential C: `#pragma omp` lines are ignored and these calls are unknown calls. */
#ifndef _C2GPU_OMP_H
#define _C2GPU_OMP_H

typedef struct { void *_c2gpu_opaque; } omp_lock_t;
typedef struct { void *_c2gpu_opaque; } omp_nest_lock_t;
typedef enum { omp_sched_static = 1, omp_sched_dynamic = 2, omp_sched_guided = 3, omp_sched_auto = 4 } omp_sched_t;

int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
int omp_get_num_procs(void);
int omp_in_parallel(void);
void omp_set_num_threads(int num_threads);
void omp_set_dynamic(int dynamic_threads);
int omp_get_dynamic(void);
double omp_get_wtime(void);
double omp_get_wtick(void);
void omp_set_nested(int nested);
int omp_get_nested(void);
void omp_set_schedule(omp_sched_t kind, int chunk_size);
void omp_get_schedule(omp_sched_t *kind, int *chunk_size);
int omp_get_thread_limit(void);
int omp_get_level(void);
int omp_get_active_level(void);
int omp_get_ancestor_thread_num(int level);
int omp_get_team_size(int level);
int omp_get_num_teams(void);
int omp_get_team_num(void);
int omp_get_num_devices(void);
int omp_get_default_device(void);
void omp_set_default_device(int device_num);
int omp_is_initial_device(void);

void omp_init_lock(omp_lock_t *lock);
void omp_destroy_lock(omp_lock_t *lock);
void omp_set_lock(omp_lock_t *lock);
void omp_unset_lock(omp_lock_t *lock);
int omp_test_lock(omp_lock_t *lock);
void omp_init_nest_lock(omp_nest_lock_t *lock);
void omp_destroy_nest_lock(omp_nest_lock_t *lock);
void omp_set_nest_lock(omp_nest_lock_t *lock);
void omp_unset_nest_lock(omp_nest_lock_t *lock);
int omp_test_nest_lock(omp_nest_lock_t *lock);

#endif
