/* pool.c: background compiles (see pool.h). */
#define _GNU_SOURCE
#include "pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the emulator compiled, through NVRTC for cp->nvrtc_arch (a GPU's
 * compiler, which needs no GPU): the host compiler behind the emulator accepts
 * some code NVRTC does not (host-only library functions, headers NVRTC lacks,
 * INFINITY without <math.h>), and a variant that passes on the CPU should not
 * fail to build on the GPU later without a word. The result is cached like
 * every compile; the note is NVRTC's first error line. Where it builds, each
 * kernel's __launch_bounds__ go into emu's resources (max_threads), so the
 * emulator refuses a launch of more threads, as a GPU does. */
static void nvrtc_check(hn_pool *cp, hn_pool_job *s, hn_module_image *emu) {
    hn_compile_req req = s->build.req;
    req.arch = cp->nvrtc_arch;
    req.instrument = HN_INSTRUMENT_NONE;
    hn_module_image img;
    hn_err err;
    char *log = NULL;
    if (hn_compile(HN_TARGET_CUDA, &req, &img, &log, &err) == 0) {
        for (int i = 0; emu->res && i < emu->n_kernels && i < img.n_kernels; i++)
            emu->res[i].max_threads = hn_cubin_max_threads(img.image, img.image_size, img.lowered[i]);
        hn_module_image_free(&img);
    } else {
        char line[400];
        hn_first_error_line(log && *log ? log : err.msg, line, sizeof line);
        snprintf(s->nvrtc_note, sizeof s->nvrtc_note, "NVRTC (%s) rejects it, so it would not build for a GPU: %s",
                 cp->nvrtc_arch, line);
        fprintf(stderr, "harness: warning: %s compiles on the emulator, but %s\n", s->build.req.src_path,
                s->nvrtc_note);
    }
    free(log);
}

static void *compile_thread(void *arg) {
    hn_pool *cp = arg;
    pthread_mutex_lock(&cp->mu);
    for (;;) {
        while (cp->next >= cp->n && !cp->closed) pthread_cond_wait(&cp->cv, &cp->mu);
        if (cp->next >= cp->n) break; /* closed and nothing left */
        hn_pool_job *s = cp->jobs[cp->next++];
        pthread_mutex_unlock(&cp->mu);
        hn_err err;
        char *log = NULL;
        hn_module_image img;
        int rc = hn_compile(cp->target, &s->build.req, &img, &log, &err);
        char line[512] = "";
        if (rc != 0) {
            /* The reason is the compiler's one-line message when it gives one (the
             * emulator's names the user's line where the log's first error line is
             * inside its shim or at "<command-line>"), else the log's first error
             * line; the full log goes to stderr. */
            size_t src_n = strlen(s->build.req.src_path);
            if (!strchr(err.msg, '\n')) {
                const char *m = err.msg;
                if (strncmp(m, s->build.req.src_path, src_n) == 0 && strncmp(m + src_n, ": ", 2) == 0) m += src_n + 2;
                size_t len = strlen(m) < sizeof line ? strlen(m) : sizeof line - 1;
                memcpy(line, m, len);
                line[len] = '\0';
            } else {
                hn_first_error_line(log && *log ? log : err.msg, line, sizeof line);
            }
            fprintf(stderr, "harness: compile error in %s:\n%s\n", s->build.req.src_path, err.msg);
        }
        free(log);
        if (rc == 0 && cp->target == HN_TARGET_EMU && cp->nvrtc_arch) nvrtc_check(cp, s, &img);
        pthread_mutex_lock(&cp->mu);
        s->img = img;
        s->ok = rc == 0;
        if (rc != 0) snprintf(s->reason, sizeof s->reason, "%s", line);
        cp->busy_seconds += img.seconds;
        s->done = 1;
        pthread_cond_broadcast(&cp->cv);
    }
    pthread_mutex_unlock(&cp->mu);
    return NULL;
}

void hn_pool_start(hn_pool *cp, int threads, hn_target target, const char *nvrtc_arch) {
    memset(cp, 0, sizeof *cp);
    pthread_mutex_init(&cp->mu, NULL);
    pthread_cond_init(&cp->cv, NULL);
    cp->target = target;
    cp->nvrtc_arch = nvrtc_arch;
    cp->n_threads = threads > 0 ? threads : 1;
    cp->threads = xcalloc((size_t)cp->n_threads, sizeof *cp->threads);
    for (int i = 0; i < cp->n_threads; i++) pthread_create(&cp->threads[i], NULL, compile_thread, cp);
}

int hn_pool_add(hn_pool *cp, hn_pool_job *job) {
    pthread_mutex_lock(&cp->mu);
    if (cp->n == cp->cap) {
        cp->cap = cp->cap ? 2 * cp->cap : 16;
        cp->jobs = xrealloc(cp->jobs, (size_t)cp->cap * sizeof *cp->jobs);
    }
    int i = cp->n++;
    cp->jobs[i] = job;
    pthread_cond_broadcast(&cp->cv);
    pthread_mutex_unlock(&cp->mu);
    return i;
}

void hn_pool_wait(hn_pool *cp, int i, volatile double *since) {
    double t0 = hn_now();
    pthread_mutex_lock(&cp->mu);
    hn_pool_job *s = cp->jobs[i];
    if (!s->done && since) *since = t0;
    while (!s->done) pthread_cond_wait(&cp->cv, &cp->mu);
    if (since) *since = 0;
    pthread_mutex_unlock(&cp->mu);
    cp->wait_seconds += hn_now() - t0;
}

void hn_pool_seal(hn_pool *cp) {
    if (!cp->threads) return;
    pthread_mutex_lock(&cp->mu);
    cp->closed = 1;
    pthread_cond_broadcast(&cp->cv);
    pthread_mutex_unlock(&cp->mu);
}

void hn_pool_close(hn_pool *cp) {
    if (!cp->threads) return;
    double t0 = hn_now();
    hn_pool_seal(cp);
    for (int i = 0; i < cp->n_threads; i++) pthread_join(cp->threads[i], NULL);
    free(cp->threads);
    cp->threads = NULL;
    cp->wait_seconds += hn_now() - t0;
}

void hn_pool_destroy(hn_pool *cp) {
    if (!cp->jobs && !cp->threads) return;
    hn_pool_close(cp);
    for (int i = 0; i < cp->n; i++) {
        hn_module_image_free(&cp->jobs[i]->img);
        hn_build_free(&cp->jobs[i]->build);
        free(cp->jobs[i]);
    }
    free(cp->jobs);
    pthread_mutex_destroy(&cp->mu);
    pthread_cond_destroy(&cp->cv);
    memset(cp, 0, sizeof *cp);
}
