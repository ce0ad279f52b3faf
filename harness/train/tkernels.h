/*
 * tkernels.h: the kernels `harness train` launches, chosen by a config
 * (configs/train/default.json) and never by the code: per layer type and pass a
 * "slot" (linear.forward, conv2d.backward_filter, adam.update, ...), each naming
 * the .cu file, the kernel, its defines, its launch geometry and its arguments,
 * with the keys and the expression language of a sweep config's variants
 * (README "Sweep configs"), so a variant of a sweep can be pasted in.
 *
 * Every slot has a fixed set of names its expressions and arguments may use:
 * its buffers (device pointers: "x", "weight", ...) and its scalars ("batch",
 * "in_f", ...), named as the catalogue operator's buffers and parameters where
 * there is one (tkernels.c's SLOTS table lists them; docs/training.md too).
 * Names resolve to the slot's defines first, then its buffers and scalars.
 *
 * `--tuned FILE` (a best.json of `harness tune`) replaces the defines of every
 * slot whose kernel is the tuned one with the tune's winning "defines".
 *
 * Life cycle: hn_tk_load parses and validates the whole file (errors name the
 * file and JSON path; nothing is compiled); hn_tk_bind compiles and loads a
 * slot's kernel on first use (once, through the compile cache) and evaluates
 * the geometry and the arguments for one set of values into an hn_tk_call,
 * which hn_tk_launch launches as often as wanted without evaluating anything.
 *
 * Ownership: hn_tk_load returns a table the caller destroys with hn_tk_destroy
 * (NULL-safe) before the backend it compiled for. Calls hold no resources.
 */
#ifndef HN_TRAIN_TKERNELS_H
#define HN_TRAIN_TKERNELS_H

#include "backend.h"
#include "util.h"

#define HN_TK_MAX_ARGS 24

typedef struct hn_tk hn_tk;

/* A value given to a slot: a buffer ('p'), an integer ('i'), a float ('f') or a
 * string ('s'). */
typedef struct {
    const char *name;
    char kind;
    hn_dptr p;
    int64_t i;
    double f;
    const char *s;
} hn_tk_val;

#define HN_TK_BUF(n, v) ((hn_tk_val){.name = (n), .kind = 'p', .p = (v)})
#define HN_TK_INT(n, v) ((hn_tk_val){.name = (n), .kind = 'i', .i = (v)})
#define HN_TK_FLT(n, v) ((hn_tk_val){.name = (n), .kind = 'f', .f = (v)})
#define HN_TK_STR(n, v) ((hn_tk_val){.name = (n), .kind = 's', .s = (v)})

/* One launch, evaluated: geometry and packed arguments. */
typedef struct {
    const char *slot;        /* "linear.forward" */
    hn_kernel *k;
    hn_launch_dims dims;
    union {
        int32_t i;
        uint32_t u;
        int64_t l;
        float f;
        double d;
        hn_dptr p;
    } vals[HN_TK_MAX_ARGS];
    void *args[HN_TK_MAX_ARGS];
    int n_args;
} hn_tk_call;

/* Loads path; tuned (NULL: none) is a best.json whose defines replace those of
 * the slots running its kernel. */
int hn_tk_load(const char *path, const char *tuned, hn_tk **out, hn_err *err);
void hn_tk_destroy(hn_tk *t);

/* Where compiled kernels go and which backend runs them; before any bind.
 * verbose: say on stderr what each slot compiles. */
void hn_tk_set_backend(hn_tk *t, hn_backend *be, const char *arch, const char *cache_dir, int verbose);

/* Whether the config has the slot ("linear.forward"). */
int hn_tk_has(const hn_tk *t, const char *slot);
/* Compiles and loads slot's kernel and checks its signature against the
 * config's arguments, as the first hn_tk_bind does: a missing slot, a kernel
 * that does not compile or does not fit its arguments is an error naming the
 * config and slot. */
int hn_tk_prepare(hn_tk *t, const char *slot, hn_err *err);

/* Evaluates slot for vals (every buffer and scalar of the slot, in any order)
 * into call, compiling the slot's kernel first if needed. The call stays valid
 * while t lives. */
int hn_tk_bind(hn_tk *t, const char *slot, const hn_tk_val *vals, int n_vals, hn_tk_call *call, hn_err *err);

/* Launches a bound call on the backend's stream. */
int hn_tk_launch(hn_backend *be, const hn_tk_call *call, hn_err *err);

/* Compiles every slot of the config for target (cuda: NVRTC for arch, no GPU
 * needed) without loading anything, printing a line per slot to out (if not
 * NULL). Returns the number of slots that failed to compile (their errors
 * printed), or -1. */
int hn_tk_compile_all(hn_tk *t, int cuda, const char *arch, const char *cache_dir, FILE *out, hn_err *err);

/* One line per compiled slot: "linear.forward  linear_tiled[TILE=16]  (file)". */
void hn_tk_describe(const hn_tk *t, FILE *out);

/* The default config: $HARNESS_ROOT/configs/train/default.json, else the source
 * tree's. Caller frees. */
char *hn_tk_default_path(void);

#endif
