/*
 * idx.c: IDX files, plain or gzipped; see idx.h.
 */
#include "train/idx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads exactly n bytes; 0, or the number read when the file ended early, or -1
 * on a read error (message in err). */
static int64_t read_all(gzFile f, void *buf, int64_t n, const char *path, hn_err *err) {
    int64_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1 << 30) ? 1u << 30 : (unsigned)(n - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r < 0) {
            int code;
            const char *msg = gzerror(f, &code);
            if (code == Z_BUF_ERROR) break; /* the gzip stream ends early: the caller says truncated */
            hn_errf(err, "%s: cannot read: %s", path, code == Z_ERRNO ? strerror(errno) : msg);
            return -1;
        }
        if (r == 0) break;
        got += r;
    }
    return got;
}

int hn_idx_load(const char *path, int ndim, hn_idx *out, hn_err *err) {
    memset(out, 0, sizeof *out);
    gzFile f = gzopen(path, "rb");
    if (!f) return hn_errf(err, "%s: cannot open: %s", path, errno ? strerror(errno) : "out of memory");
    int rc = -1;
    unsigned char head[4];
    int64_t got = read_all(f, head, 4, path, err);
    if (got < 0) goto done;
    if (got < 4) {
        hn_errf(err, "%s: truncated: %lld bytes, shorter than an IDX header", path, (long long)got);
        goto done;
    }
    if (head[0] != 0 || head[1] != 0 || head[2] != 0x08 || head[3] != ndim) {
        hn_errf(err, "%s: wrong magic %02x %02x %02x %02x (expected 00 00 08 %02x: an idx%d file of unsigned bytes)", path,
                head[0], head[1], head[2], head[3], ndim, ndim);
        goto done;
    }
    out->ndim = ndim;
    int64_t size = 1;
    for (int i = 0; i < ndim; i++) {
        unsigned char d[4];
        got = read_all(f, d, 4, path, err);
        if (got < 0) goto done;
        if (got < 4) {
            hn_errf(err, "%s: truncated in the header (dimension %d of %d)", path, i + 1, ndim);
            goto done;
        }
        uint32_t v = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
        if (v == 0 || v > (1u << 30)) {
            hn_errf(err, "%s: dimension %d is %u", path, i + 1, v);
            goto done;
        }
        out->dims[i] = (int32_t)v;
        size *= v;
        if (size > ((int64_t)1 << 34)) {
            hn_errf(err, "%s: the header announces more than 16 GiB of data", path);
            goto done;
        }
    }
    out->size = size;
    out->data = malloc((size_t)size + 1);
    if (!out->data) {
        hn_errf(err, "%s: no memory for %lld bytes", path, (long long)size);
        goto done;
    }
    got = read_all(f, out->data, size, path, err);
    if (got < 0) goto done;
    if (got < size) {
        int code;
        const char *msg = gzerror(f, &code);
        hn_errf(err, "%s: truncated: the header announces %lld bytes of data, the file holds %lld%s%s", path,
                (long long)size, (long long)got, code ? "; " : "", code ? msg : "");
        goto done;
    }
    unsigned char extra;
    got = read_all(f, &extra, 1, path, err);
    if (got < 0) goto done;
    if (got > 0) {
        hn_errf(err, "%s: more data than the header announces (%lld bytes): not an idx%d file of this size", path,
                (long long)size, ndim);
        goto done;
    }
    rc = 0;
done:
    gzclose(f);
    if (rc != 0) hn_idx_free(out);
    return rc;
}

void hn_idx_free(hn_idx *x) {
    if (!x) return;
    free(x->data);
    memset(x, 0, sizeof *x);
}

static char *find(const char *dir, const char *name, hn_err *err) {
    char *plain = xasprintf("%s/%s", dir, name);
    if (hn_file_exists(plain)) return plain;
    char *gz = xasprintf("%s.gz", plain);
    if (hn_file_exists(gz)) {
        free(plain);
        return gz;
    }
    hn_errf(err, "%s(.gz): not found (--data names the folder holding the four IDX files)", plain);
    free(plain);
    free(gz);
    return NULL;
}

int hn_idx_set_load(const char *dir, const char *prefix, int classes, hn_idx_set *out, hn_err *err) {
    memset(out, 0, sizeof *out);
    char *iname = xasprintf("%s-images-idx3-ubyte", prefix), *lname = xasprintf("%s-labels-idx1-ubyte", prefix);
    int rc = -1;
    out->images_path = find(dir, iname, err);
    if (!out->images_path) goto done;
    out->labels_path = find(dir, lname, err);
    if (!out->labels_path) goto done;
    if (hn_idx_load(out->images_path, 3, &out->images, err) != 0) goto done;
    if (hn_idx_load(out->labels_path, 1, &out->labels, err) != 0) goto done;
    if (out->images.dims[0] != out->labels.dims[0]) {
        hn_errf(err, "%s holds %d images but %s holds %d labels: the counts must agree", out->images_path,
                out->images.dims[0], out->labels_path, out->labels.dims[0]);
        goto done;
    }
    for (int64_t i = 0; i < out->labels.size; i++)
        if (out->labels.data[i] >= classes) {
            hn_errf(err, "%s: label %d of sample %lld is not a class (0 to %d)", out->labels_path, out->labels.data[i],
                    (long long)i, classes - 1);
            goto done;
        }
    rc = 0;
done:
    free(iname);
    free(lname);
    if (rc != 0) hn_idx_set_free(out);
    return rc;
}

void hn_idx_set_free(hn_idx_set *s) {
    if (!s) return;
    hn_idx_free(&s->images);
    hn_idx_free(&s->labels);
    free(s->images_path);
    free(s->labels_path);
    memset(s, 0, sizeof *s);
}
