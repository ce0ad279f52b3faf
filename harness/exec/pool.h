/*
 * pool.h: compiling kernel variants in background threads while the device
 * measures others.
 *
 * A job is one variant's compile request (hn_build) and, once done, its image
 * and the loaded kernel. Jobs are compiled in the order they are added, by
 * `threads` threads; hn_pool_wait blocks until one is done. Jobs may be added
 * while threads run (harness tune adds the configurations it will ask for next,
 * so the device never waits on the compiler when the cache is cold).
 *
 * Invariants: a job's address never changes once added (the pool keeps
 * pointers); done, ok and reason are written under the pool's lock and read
 * after hn_pool_wait returns. The pool owns its jobs: hn_pool_destroy frees
 * their images (the caller frees the kernels through its backend first).
 */
#ifndef HN_POOL_H
#define HN_POOL_H

#include <pthread.h>

#include "run.h"

typedef struct {
    hn_build build;
    hn_module_image img;
    int done;
    int ok;
    char reason[sizeof(hn_err)];
    char key[33];      /* the compile key, known before compiling */
    hn_kernel *kernels[HN_MAX_LAUNCHES]; /* one per launch, loaded by the runner on first use */
    char nvrtc_note[512]; /* emulator: NVRTC's first error where it rejects what the emulator
                             compiled (the variant would not build for a GPU), else "" */
    int loaded;        /* kernel_load attempted */
    int usable;        /* compiled, loaded and signature checked */
} hn_pool_job;

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    hn_pool_job **jobs;
    int n, cap;
    int next;            /* the next job to start */
    int closed;          /* no more jobs: threads leave when the queue is empty */
    hn_target target;
    const char *nvrtc_arch; /* emulator: also compile each variant with NVRTC for this arch
                               (cached), to say where a GPU would refuse it; NULL: not */
    pthread_t *threads;
    int n_threads;
    double busy_seconds; /* compiler work, summed over threads */
    double wait_seconds; /* time callers waited for a compile */
} hn_pool;

/* Starts `threads` compile threads for target; with nvrtc_arch (emulator
 * only; NULL: none), each compiled job is also put through NVRTC for it. */
void hn_pool_start(hn_pool *cp, int threads, hn_target target, const char *nvrtc_arch);
/* Adds a job (the pool takes it; its build must be filled) and returns its
 * index. */
int hn_pool_add(hn_pool *cp, hn_pool_job *job);
/* Waits until job i is compiled. While it waits, *since (if not NULL) holds the
 * time the wait began (a watchdog in another process can see it), else 0. */
void hn_pool_wait(hn_pool *cp, int i, volatile double *since);
/* No more jobs will come: the threads leave once the queue is empty (does not
 * wait for them). */
void hn_pool_seal(hn_pool *cp);
/* Seals, then waits for the threads to finish the queue and stop. */
void hn_pool_close(hn_pool *cp);
/* Closes (if not yet), frees every job's build and image; the caller has freed
 * the kernels. NULL-safe on a pool never started. */
void hn_pool_destroy(hn_pool *cp);

#endif
