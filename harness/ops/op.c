/* op.c: the operator registry and helpers shared by operators; see op.h. */
#include "op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HN_PI 3.14159265358979323846

extern const hn_op hn_op_conv2d;

static const hn_op *const OPS[] = {&hn_op_conv2d};

const hn_op *hn_op_find(const char *name) {
    for (size_t i = 0; i < HN_ARRAY_LEN(OPS); i++)
        if (strcmp(OPS[i]->name, name) == 0) return OPS[i];
    return NULL;
}

const char *hn_op_names(void) {
    return "conv2d";
}

int hn_op_param_index(const hn_op *op, const char *name) {
    for (int i = 0; i < op->n_params; i++)
        if (strcmp(op->params[i].name, name) == 0) return i;
    return -1;
}

int hn_op_buffer_index(const hn_op *op, const char *name) {
    for (int i = 0; i < op->n_buffers; i++)
        if (strcmp(op->buffers[i].name, name) == 0) return i;
    return -1;
}

size_t hn_dtype_size(hn_dtype t) {
    switch (t) {
    case HN_DT_F32: return 4;
    case HN_DT_F64: return 8;
    case HN_DT_I32: return 4;
    }
    return 0;
}

const char *hn_dtype_name(hn_dtype t) {
    switch (t) {
    case HN_DT_F32: return "float32";
    case HN_DT_F64: return "float64";
    case HN_DT_I32: return "int32";
    }
    return "?";
}

void hn_ref_free(hn_ref *r) {
    if (!r) return;
    free(r->values);
    free(r->index);
    memset(r, 0, sizeof *r);
}

void hn_fill_randn_f32(float *x, int64_t n, uint64_t seed) {
    /* Box-Muller on splitmix64 uniforms: two normals per pair of uniforms. */
    uint64_t s = seed ^ 0x5851f42d4c957f2dULL;
    for (int64_t i = 0; i < n; i += 2) {
        double u1 = hn_rand_unit(&s), u2 = hn_rand_unit(&s);
        if (u1 < 1e-300) u1 = 1e-300;
        double rad = sqrt(-2.0 * log(u1));
        x[i] = (float)(rad * cos(2.0 * HN_PI * u2));
        if (i + 1 < n) x[i + 1] = (float)(rad * sin(2.0 * HN_PI * u2));
    }
}
