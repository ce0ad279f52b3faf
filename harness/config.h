/*
 * config.h: a sweep config (JSON, read with cJSON) turned into a plan: the cases
 * to run (axis values, filtered by constraints, optionally sampled with a stored
 * seed) and the kernel variants (each .cu file + kernel + defines, expanded over
 * define axes), with their launch geometry and argument bindings as expressions.
 *
 * Every error names the file, the JSON path and what was expected, e.g.
 *   configs/x.json: variants[1].grid[2]: at column 9: unknown name 'out_chan'
 * and nothing runs. The format is documented in README.md ("Sweep configs").
 *
 * Names in expressions: a variant's defines, then the operator's parameters,
 * then the axes. Define names may not collide with the others.
 *
 * Invariants after hn_plan_load (sweep.h) succeeds: op is set; every expression parsed and
 * refers only to known names; n_cases >= 0 cases, each with n_axes values; every
 * variant instance belongs to a spec and has one value per spec define.
 */
#ifndef HN_CONFIG_H
#define HN_CONFIG_H

#include <stdint.h>

#include "expr.h"
#include "ops/op.h"
#include "util.h"

struct hn_device_info;

typedef struct {
    char *name;
    hn_value *values;   /* strings owned by texts[] */
    char **texts;       /* each value as text (for CSV and -D) */
    int n;
    int tunable;        /* a define of the variant's "tune": its values are a search
                           space for `harness tune`, not crossed into variants */
} hn_axis;

/* How a kernel argument gets its value. */
typedef enum {
    HN_ARG_BUFFER,       /* an operator buffer: index */
    HN_ARG_PARAM,        /* an operator parameter: index, its type */
    HN_ARG_EXPR,         /* a typed expression */
    HN_ARG_DEBUG_COUNTER, /* the SINGLE_BLOCK counter the harness allocates */
    HN_ARG_SCRATCH,      /* a scratch buffer of the variant ("scratch"): index */
    HN_ARG_STRUCT        /* a struct passed by value (an array in args): its fields */
} hn_arg_kind;

/* The most bytes a struct argument may have (CUDA takes 4 KB of parameters). */
#define HN_MAX_STRUCT_BYTES 256

/* A variant's scratch buffers: device memory the harness allocates for each of
 * its rows (a workspace, partial sums, a counter), as many bytes as an
 * expression says; they start as 0xFF bytes, or 0 before every launch where
 * "zero" names them (bit HN_ZERO_SCRATCH(i) of hn_variant_spec.zero). */
#define HN_MAX_SCRATCH 8
/* A variant's "constants": module-scope __constant__ (or __device__) variables
 * of its file that the harness writes before a row's first launch, as the
 * author's host code did with cudaMemcpyToSymbol. */
#define HN_MAX_CONSTANTS 16
#define HN_ZERO_BUFFERS 48 /* bits 0 .. 47 of zero: output buffers; then scratch buffers */
#define HN_ZERO_SCRATCH(i) ((uint64_t)1 << (HN_ZERO_BUFFERS + (i)))

typedef struct hn_arg {
    hn_arg_kind kind;
    int index;
    char type;           /* 'i' int32, 'u' uint32, 'l' int64, 'f' float, 'd' double, 'b' one byte
                            (a bool, or an empty tag such as std::bool_constant<B>), 'p' pointer,
                            'o' a struct */
    hn_expr *expr;
    char *text;          /* as written in the config ("[x, y, int: n]" for a struct) */
    /* HN_ARG_STRUCT: its fields in order, laid out as C does (each at a multiple
     * of its alignment: pointers, long and double 8, a bool 1, the rest 4; a struct
     * that of its widest field), and its size and alignment */
    struct hn_arg *fields;
    int n_fields;
    int offset;          /* a field's place in the struct that holds it */
    /* HN_ARG_BUFFER: expr, when not NULL, is an offset in elements ("y + 256": a
     * pointer into the buffer), checked against its size at each row; where
     * names the argument in the config ("file: variants[0].args[1]") */
    char *where;
    int size, align;
} hn_arg;

/* The bytes (and alignment) of a value of argument type `type`: 8 for a pointer,
 * long or double, 1 for a bool, 4 for the rest. */
int hn_arg_type_size(char type);
/* The name of a type code ("int" for 'i', "struct" for 'o'). */
const char *hn_arg_type_name(char type);

/* One launch of a variant: a kernel of its file, its geometry and arguments. */
typedef struct {
    char *kernel;        /* C++ name expression */
    hn_expr *block[3], *grid[3], *shared;
    hn_arg *args;
    int n_args;
} hn_launch_spec;

#define HN_MAX_LAUNCHES 8

typedef struct {
    char *name;
    char *file;          /* resolved against the config's folder */
    char *kernel;        /* C++ name expression */
    hn_axis *defines;    /* a define with several values is an axis */
    int n_defines;
    hn_expr *block[3], *grid[3], *shared;
    hn_expr *precision;  /* "float" (NULL), "double", ...: the peak and the baselines it is
                            compared with */
    hn_expr **where;     /* constraints that need the case */
    hn_expr **restrict_; /* the tune space's restrictions (over tunables, defines,
                            parameters, axes and the device's limits) */
    int n_restrict;
    int n_where;
    hn_arg *args;
    int n_args;
    char **include_dirs; /* resolved */
    int n_include_dirs;
    char **options;      /* extra NVRTC options */
    int n_options;
    uint64_t zero;       /* bit i: output buffer i is set to 0 before every launch ("zero":
                            kernels that accumulate into it, with atomics say); bit
                            HN_ZERO_SCRATCH(i): scratch buffer i */
    char *scratch_names[HN_MAX_SCRATCH];
    hn_expr *scratch_bytes[HN_MAX_SCRATCH];
    int n_scratch;
    /* "constants": {"SYMBOL": binding}: each symbol's C++ name (as in
     * cudaMemcpyToSymbol) and what it gets: an input buffer's contents
     * (HN_ARG_BUFFER), a parameter or a typed expression (its value) */
    char *const_names[HN_MAX_CONSTANTS];
    hn_arg const_vals[HN_MAX_CONSTANTS];
    int n_constants;
    /* "launches": the kernels launched after the first, in order, each row
     * timing them all (the first is kernel, block, grid, shared and args above) */
    hn_launch_spec *more;
    int n_more;
    char *kernels_text;  /* kernel, or every launch's joined by ';' (results' kernel column) */
} hn_variant_spec;

/* How many kernels one row of the variant launches (1 + n_more), and launch i
 * of them as a view of the spec (i = 0: its own kernel, geometry and args). */
static inline int hn_spec_launches(const hn_variant_spec *s) {
    return 1 + s->n_more;
}
static inline hn_launch_spec hn_spec_launch(const hn_variant_spec *s, int i) {
    if (i > 0) return s->more[i - 1];
    hn_launch_spec l = {s->kernel, {s->block[0], s->block[1], s->block[2]}, {s->grid[0], s->grid[1], s->grid[2]},
                        s->shared, s->args, s->n_args};
    return l;
}

typedef struct {
    int spec;            /* index into plan->specs */
    int *choice;         /* per spec define: index of its value */
    char *label;         /* "name" or "name[ACCUM_DTYPE=double]" */
} hn_variant;

typedef struct {
    int64_t id;          /* position in the plan */
    int64_t index;       /* position in the full enumeration (before sampling) */
    hn_value *values;    /* one per axis (borrowed from the axes) */
    char *strings;       /* storage for string values of a made case, else NULL */
} hn_case;

/* The check of one output buffer: NULL / < 0 where the config's general
 * tolerances apply. */
typedef struct {
    hn_expr *atol, *rtol;
    double min_match;
} hn_out_check;

/* Timing settings from the config; -1 (or < 0) where not set. */
typedef struct {
    int warmup;
    int repeat;          /* shorthand: exactly this many samples */
    int min_samples;
    int max_samples;
    double min_time;
    double max_noise;    /* fraction, e.g. 0.005 */
    double timeout;
    int hot;             /* 1 hot, 0 cold, -1 unset */
} hn_timing_cfg;

/* The config's "tuning" defaults for harness tune (the command line wins):
 * NULL / < 0 where not given. */
typedef struct {
    char *strategy;
    char *budget;
    int top;
    int across;
} hn_tuning_cfg;

/* A variant of --tuned (tuned.h): the instances of one spec that run a tune's
 * configurations, one of them per case (the others have no row in that case). */
typedef struct {
    char *file;          /* the best.json */
    int first, n;        /* its instances: variants[first .. first + n), one label */
    int *of_case;        /* per case: the instance (an index into variants) that runs it */
    char **note;         /* per case: whose configuration it runs ("this case", "nearest tuned
                            case m=64,n=255", "across cases"), for the results' "tuned" column */
} hn_tuned_group;

typedef struct {
    char *path;
    char *dir;
    char *name;
    char *description;
    const hn_op *op;
    hn_expr **params;    /* one per op parameter */
    hn_axis *axes;
    int n_axes;
    hn_expr **where;
    int n_where;
    int64_t n_total;     /* combinations that satisfy `where` */
    int sample_count;    /* 0: all */
    uint64_t seed;
    hn_expr *atol, *rtol;
    double min_match;
    hn_out_check *out_check; /* per op buffer (outputs only): its own tolerances */
    double reference_gflop; /* above this a case is checked on a sample */
    double emu_max_gflop;   /* < 0: unset */
    double emu_max_mb;      /* the emulator's budget in bytes moved (MB); < 0: unset */
    hn_timing_cfg timing;
    hn_tuning_cfg tuning;
    hn_variant_spec *specs;
    int n_specs;
    hn_variant *variants;
    int n_variants;
    hn_case *cases;
    int64_t n_cases;
    char **define_names; /* union over specs, in order of appearance */
    int n_define_names;
    char *notice;        /* what the loader found odd but not wrong, for the commands to
                            print (a variant no case of the plan runs); NULL: nothing */
    hn_tuned_group *tuned; /* --tuned's variants (tuned.h), or NULL */
    int n_tuned;
} hn_plan;

/* Parses and validates the config at path: the plan's axes, specs, checks
 * and tuning, without its cases and variant instances (sweep.h's hn_plan_load
 * does both). seed_override >= 0 replaces the config's seed. On error returns
 * -1 with a message naming the file, JSON path and problem. */
int hn_config_load(const char *path, int64_t seed_override, hn_plan **out, hn_err *err);
/* Same, from text (path is used in messages and its folder for relative files). */
int hn_config_parse(const char *text, const char *path, int64_t seed_override, hn_plan **out,
                    hn_err *err);
void hn_plan_free(hn_plan *p);

/* A lookup context over (case, variant): defines, op params, axes. variant may be
 * NULL (only params and axes). params must hold the evaluated op parameters, or be
 * NULL while they are being computed. */
typedef struct {
    const hn_plan *plan;
    const hn_case *c;
    const hn_variant *v;
    const double *params;
    int params_limit;   /* > 0: only the first params_limit parameters are known */
    const struct hn_device_info *dev; /* the device's limits (max_threads_per_block ...), or NULL */
} hn_scope;

/* The names of the device's limits an expression may use where a device is
 * known (restrictions of a tune space): max_threads_per_block,
 * max_shared_per_block, max_shared_per_block_optin, warp_size, sm_count,
 * max_block_dim_x/y/z. NULL-terminated. */
extern const char *const hn_device_names[];

int hn_scope_lookup(void *scope, const char *name, hn_value *out);

/* Evaluates the op parameters of a case into params (op->n_params entries);
 * integer parameters must be within 2^53 in magnitude (exact as doubles). */
int hn_plan_case_params(const hn_plan *p, const hn_case *c, double *params, hn_err *err);

/* The text of variant v's value of define name, or NULL if v lacks it. */
const char *hn_variant_define(const hn_plan *p, const hn_variant *v, const char *name);

/* Builds "NAME=VALUE" strings for v (caller frees each and the array). */
char **hn_variant_define_args(const hn_plan *p, const hn_variant *v, int *n);

/* Makes a case from assignments "a=1,b=2" (every axis of several values must be
 * given, one of a single value takes it; values need
 * not be among the axis's values), for debug runs. The case gets id -1; release it
 * with hn_case_release. */
int hn_plan_make_case(const hn_plan *p, const char *assign, hn_case *out, hn_err *err);
void hn_case_release(hn_case *c);

/* The variant whose label or spec name is name (first match), or -1. */
int hn_plan_find_variant(const hn_plan *p, const char *name);

#endif
