/*
 * ops/bench.c: `harness bench ops`: every operator's fp64 reference on its
 * bench cases, timed against a plain copy of the same bytes, so the figures the
 * operator issue asks for (compute-bound references in GFLOP/s, memory-bound
 * ones within a small factor of a copy) are printed side by side in one run.
 * Nothing is asserted: the machines are shared and noisy.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/op.h"

/* Parameters from "a=1,b=2" over the operator's defaults (numbers and choices;
 * defaults that are names of axes must be assigned). */
static int bench_params(const hn_op *op, const char *spec, double *p, hn_err *err) {
    for (int i = 0; i < op->n_params; i++) {
        const hn_op_param *pd = &op->params[i];
        p[i] = 0;
        if (pd->type == 'c') continue; /* the first choice */
        char *end;
        double v = pd->dflt ? strtod(pd->dflt, &end) : 0;
        p[i] = pd->dflt && !*end ? v : NAN;
    }
    char *copy = xstrdup(spec), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            rc = hn_errf(err, "%s: bench case '%s': '%s' is not name=value", op->name, spec, tok);
            break;
        }
        *eq = '\0';
        int i = hn_op_param_index(op, tok);
        if (i < 0) {
            rc = hn_errf(err, "%s: bench case '%s': no parameter '%s'", op->name, spec, tok);
            break;
        }
        if (op->params[i].type == 'c') {
            int k = hn_op_choice_index(&op->params[i], eq + 1);
            if (k < 0) rc = hn_errf(err, "%s: bench case '%s': '%s' is not a value of %s", op->name, spec, eq + 1, tok);
            p[i] = k;
        } else {
            p[i] = strtod(eq + 1, NULL);
        }
    }
    for (int i = 0; rc == 0 && i < op->n_params; i++)
        if (p[i] != p[i]) rc = hn_errf(err, "%s: bench case '%s' does not set %s", op->name, spec, op->params[i].name);
    free(copy);
    return rc;
}

/* Both sides of the comparison are timed the same way: the best of at least
 * BENCH_MIN_REPS calls, and more until BENCH_MIN_SECONDS have gone by (at most
 * BENCH_MAX_REPS), so a warm, steady call is compared with a warm, steady call
 * (three calls of a sub-millisecond reference were often all disturbed on a
 * shared machine: a thread started late, a page first touched). */
enum { BENCH_MIN_REPS = 5, BENCH_MAX_REPS = 200 };
#define BENCH_MIN_SECONDS 0.1

static int bench_more(int rep, double spent) {
    return rep < BENCH_MIN_REPS || (spent < BENCH_MIN_SECONDS && rep < BENCH_MAX_REPS);
}

/* Seconds per call of a plain copy of `bytes` (read once, written once). */
static double copy_seconds(double bytes) {
    size_t n = (size_t)(bytes / 2) + 64;
    char *a = xmalloc(n), *b = xmalloc(n);
    memset(a, 1, n);
    memset(b, 2, n);
    double best = 1e30, spent = 0;
    for (int rep = 0; bench_more(rep, spent); rep++) {
        double t0 = hn_now();
        memcpy(b, a, n);
        double t = hn_now() - t0;
        spent += t;
        if (t < best) best = t;
        a[rep % 64] = b[n - 1 - rep % 64]; /* keep the copies observable */
    }
    free(a);
    free(b);
    return best;
}

int hn_op_bench(FILE *out, const char *only) {
    int rc = 0;
    fprintf(out, "%-24s %-44s %10s %10s %10s %10s %8s\n", "operator", "case", "ref ms", "GFLOP/s", "GB/s", "copy GB/s",
            "x copy");
    for (int oi = 0; oi < hn_op_count(); oi++) {
        const hn_op *op = hn_op_at(oi);
        if (only && strcmp(only, op->name) != 0) continue;
        for (int ci = 0; op->bench_cases && op->bench_cases[ci]; ci++) {
            double p[64];
            int64_t counts[64];
            hn_err err;
            if (bench_params(op, op->bench_cases[ci], p, &err) != 0 || op->shape(p, counts, &err) != 0) {
                fprintf(out, "%s: %s\n", op->name, err.msg);
                rc = -1;
                continue;
            }
            void *bufs[64];
            for (int i = 0; i < op->n_buffers; i++)
                bufs[i] = xcalloc((size_t)counts[i] + 1, hn_dtype_size(hn_op_dtype(op, p, i)));
            op->generate(p, bufs, 1);
            double best = 1e30, spent = 0;
            for (int rep = 0; bench_more(rep, spent); rep++) {
                hn_ref refs[64];
                memset(refs, 0, sizeof(hn_ref) * (size_t)op->n_buffers);
                double t0 = hn_now();
                int r = op->reference(p, bufs, refs, 1e12, 1, 0, &err);
                double t = hn_now() - t0;
                spent += t;
                for (int i = 0; i < op->n_buffers; i++) hn_ref_free(&refs[i]);
                if (r != 0) {
                    fprintf(out, "%s: %s\n", op->name, err.msg);
                    rc = -1;
                    break;
                }
                if (t < best) best = t;
            }
            double bytes = op->bytes(p), flop = op->flop(p), copy = copy_seconds(bytes);
            char label[128];
            op->label(p, label, sizeof label);
            fprintf(out, "%-24s %-44s %10.3f %10.3g %10.3g %10.3g %8.2f\n", op->name, label, best * 1e3,
                    flop / best * 1e-9, bytes / best * 1e-9, bytes / copy * 1e-9, best / copy);
            fflush(out);
            for (int i = 0; i < op->n_buffers; i++) free(bufs[i]);
        }
    }
    return rc;
}
