/* check.c: see check.h. */
#include "check.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

int hn_check_close(double out, double ref, double atol, double rtol) {
    return isfinite(out) && fabs(out - ref) <= atol + rtol * fabs(ref);
}

double hn_buffer_get(const void *buf, hn_dtype dtype, int64_t i) {
    switch (dtype) {
    case HN_DT_F64: return ((const double *)buf)[i];
    case HN_DT_I32: return ((const int32_t *)buf)[i];
    case HN_DT_F16: return hn_half_to_float(((const uint16_t *)buf)[i]);
    case HN_DT_BF16: return hn_bf16_to_float(((const uint16_t *)buf)[i]);
    default: return ((const float *)buf)[i];
    }
}

typedef struct {
    const void *out;
    hn_dtype dtype;
    const hn_ref *ref;
    double atol, rtol;
    int64_t begin, end;
    hn_check_result res;
} check_part;

/* Whether element i is all 0xFF bytes, as hn_poison_outputs leaves it. */
static int all_ones(const void *buf, hn_dtype dtype, int64_t i) {
    size_t n = hn_dtype_size(dtype);
    const unsigned char *b = (const unsigned char *)buf + (size_t)i * n;
    for (size_t k = 0; k < n; k++)
        if (b[k] != 0xFF) return 0;
    return 1;
}

static void check_range(check_part *p) {
    hn_check_result *res = &p->res;
    memset(res, 0, sizeof *res);
    const hn_ref *ref = p->ref;
    for (int64_t i = p->begin; i < p->end; i++) {
        int64_t e = ref->index ? ref->index[i] : i;
        double o = hn_buffer_get(p->out, p->dtype, e), r = ref->values[i];
        res->checked++;
        if (!isfinite(o)) {
            res->nonfinite++;
            if (all_ones(p->out, p->dtype, e)) {
                if (!res->poisoned++ || e < res->first_poisoned) res->first_poisoned = e;
            }
        } else {
            double abs_err = fabs(o - r);
            if (abs_err > res->max_abs_err) res->max_abs_err = abs_err;
            if (r != 0.0 && abs_err / fabs(r) > res->max_rel_err) res->max_rel_err = abs_err / fabs(r);
            if (abs_err <= p->atol + p->rtol * fabs(r)) {
                res->matched++;
                continue;
            }
        }
        if (res->n_bad < HN_CHECK_MAX_BAD) res->bad[res->n_bad++] = e;
    }
}

static void *check_thread(void *arg) {
    check_range(arg);
    return NULL;
}

/* Large outputs are checked by one thread per core, in contiguous parts whose
 * results merge in order (so `bad` lists the first mismatches either way). */
#define HN_CHECK_PARALLEL_MIN ((int64_t)1 << 20)

void hn_check_f32(const float *out, const hn_ref *ref, double atol, double rtol,
                  hn_check_result *res) {
    hn_check_buffer(out, HN_DT_F32, ref, atol, rtol, res);
}

void hn_check_buffer(const void *out, hn_dtype dtype, const hn_ref *ref, double atol, double rtol,
                     hn_check_result *res) {
    if (dtype == HN_DT_I32) atol = rtol = 0; /* an index or a count is exact */
    int n_parts = ref->n >= HN_CHECK_PARALLEL_MIN ? hn_cpu_count() : 1;
    if (n_parts > 64) n_parts = 64;
    check_part parts[64];
    pthread_t threads[64];
    for (int t = 0; t < n_parts; t++) {
        parts[t] = (check_part){out, dtype, ref, atol, rtol, ref->n * t / n_parts, ref->n * (t + 1) / n_parts, {0}};
        if (t > 0 && pthread_create(&threads[t], NULL, check_thread, &parts[t]) != 0) {
            check_range(&parts[t]);
            threads[t] = 0;
        }
    }
    check_range(&parts[0]);
    memset(res, 0, sizeof *res);
    res->first_poisoned = -1;
    for (int t = 0; t < n_parts; t++) {
        if (t > 0 && threads[t]) pthread_join(threads[t], NULL);
        const hn_check_result *r = &parts[t].res;
        res->checked += r->checked;
        res->matched += r->matched;
        res->nonfinite += r->nonfinite;
        if (r->poisoned && (!res->poisoned || r->first_poisoned < res->first_poisoned))
            res->first_poisoned = r->first_poisoned;
        res->poisoned += r->poisoned;
        if (r->max_abs_err > res->max_abs_err) res->max_abs_err = r->max_abs_err;
        if (r->max_rel_err > res->max_rel_err) res->max_rel_err = r->max_rel_err;
        for (int b = 0; b < r->n_bad && res->n_bad < HN_CHECK_MAX_BAD; b++) res->bad[res->n_bad++] = r->bad[b];
    }
    res->match_fraction = res->checked ? (double)res->matched / (double)res->checked : 1.0;
}
