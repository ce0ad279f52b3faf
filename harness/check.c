/* check.c: see check.h. */
#include "check.h"

#include <math.h>
#include <string.h>

int hn_check_close(double out, double ref, double atol, double rtol) {
    return isfinite(out) && fabs(out - ref) <= atol + rtol * fabs(ref);
}

void hn_check_f32(const float *out, const hn_ref *ref, double atol, double rtol,
                  hn_check_result *res) {
    memset(res, 0, sizeof *res);
    for (int64_t i = 0; i < ref->n; i++) {
        int64_t e = ref->index ? ref->index[i] : i;
        double o = out[e], r = ref->values[i];
        res->checked++;
        if (!isfinite(o)) {
            res->nonfinite++;
        } else {
            double abs_err = fabs(o - r);
            if (abs_err > res->max_abs_err) res->max_abs_err = abs_err;
            if (r != 0.0 && abs_err / fabs(r) > res->max_rel_err) res->max_rel_err = abs_err / fabs(r);
            if (abs_err <= atol + rtol * fabs(r)) {
                res->matched++;
                continue;
            }
        }
        if (res->n_bad < HN_CHECK_MAX_BAD) res->bad[res->n_bad++] = e;
    }
    res->match_fraction = res->checked ? (double)res->matched / (double)res->checked : 1.0;
}
