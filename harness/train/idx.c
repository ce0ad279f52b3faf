/*
 * idx.c: IDX files, plain or gzipped; see idx.h.
 */
#include "train/idx.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
        static const struct {
            int code;
            const char *name;
        } TYPES[] = {{0x08, "unsigned bytes"}, {0x09, "signed bytes"}, {0x0b, "16-bit integers"},
                     {0x0c, "32-bit integers"}, {0x0d, "32-bit floats"}, {0x0e, "64-bit floats"}};
        const char *tname = NULL;
        for (size_t i = 0; i < HN_ARRAY_LEN(TYPES); i++)
            if (TYPES[i].code == head[2]) tname = TYPES[i].name;
        char why[160];
        if (head[0] != 0 || head[1] != 0 || !tname || head[3] < 1 || head[3] > 4)
            snprintf(why, sizeof why, "not an IDX file");
        else if (head[2] != 0x08)
            snprintf(why, sizeof why, "an IDX file of %s (type byte 0x%02x); only unsigned bytes (0x08) are read", tname,
                     head[2]);
        else
            snprintf(why, sizeof why, "an idx%d file (%d dimension%s) where %s are expected", head[3], head[3],
                     head[3] == 1 ? "" : "s", ndim == 3 ? "images (count, rows, cols)" : "labels (count)");
        hn_errf(err, "%s: wrong magic %02x %02x %02x %02x (expected 00 00 08 %02x: an idx%d file of unsigned bytes): %s",
                path, head[0], head[1], head[2], head[3], ndim, ndim, why);
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
        if (v == 0 && i == 0) {
            hn_errf(err, "%s: holds no %s (the header's count is 0)", path, ndim == 3 ? "images" : "labels");
            goto done;
        }
        if (v == 0 || v > (1u << 30)) {
            hn_errf(err, "%s: dimension %d (%s) is %u", path, i + 1, i == 0 ? "the count" : i == 1 ? "rows" : "columns",
                    v);
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

static int is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The names a file of the split goes by, in the order of preference: LeCun's
 * (train-images-idx3-ubyte) before the dot of Kaggle's and Windows unzips
 * (train-images.idx3-ubyte), each plain before gzipped (an unpacked copy next to
 * its .gz, as torchvision keeps them, is read without inflating). */
#define N_FORMS 4
static void forms(const char *prefix, const char *kind, int ndim, char *out[N_FORMS]) {
    out[0] = xasprintf("%s-%s-idx%d-ubyte", prefix, kind, ndim);
    out[1] = xasprintf("%s-%s.idx%d-ubyte", prefix, kind, ndim);
    out[2] = xasprintf("%s-%s-idx%d-ubyte.gz", prefix, kind, ndim);
    out[3] = xasprintf("%s-%s.idx%d-ubyte.gz", prefix, kind, ndim);
}

/* The candidates of one folder, in order: each name as a file, or as a folder
 * holding the file under one of the names (as some Kaggle downloads unpack:
 * train-images-idx3-ubyte/train-images-idx3-ubyte). */
static int candidates(const char *folder, char *const names[N_FORMS], char **found, int cap) {
    int n = 0;
    for (int i = 0; i < N_FORMS && n < cap; i++) {
        char *p = hn_path_join(folder, names[i]);
        if (is_file(p)) {
            found[n++] = p;
            continue;
        }
        if (is_dir(p))
            for (int j = 0; j < N_FORMS && n < cap; j++) {
                char *q = hn_path_join(p, names[j]);
                if (is_file(q)) found[n++] = q;
                else free(q);
            }
        free(p);
    }
    return n;
}

/* The file of the split: in DIR, or where DIR has none of the names, in DIR/raw
 * (torchvision's MNIST/raw). The first candidate of the folder is read; the next
 * one, if any, goes into *other (a note; a hint when the first does not load). */
static char *find(const char *dir, const char *prefix, const char *kind, int ndim, char **other, hn_err *err) {
    char *names[N_FORMS];
    forms(prefix, kind, ndim, names);
    char *found[2 * N_FORMS] = {0};
    int n = candidates(dir, names, found, 2 * N_FORMS);
    char *raw = hn_path_join(dir, "raw");
    if (n == 0) n = candidates(raw, names, found, 2 * N_FORMS);
    char *pick = NULL;
    *other = NULL;
    if (n > 0) {
        pick = found[0];
        if (n > 1) *other = found[1];
        for (int i = 2; i < n; i++) free(found[i]);
    } else {
        hn_sb sb;
        hn_sb_init(&sb);
        for (int i = 0; i < N_FORMS; i++) hn_sb_addf(&sb, "%s%s", i ? ", " : "", names[i]);
        hn_errf(err, "%s: no %s %s (tried %s, in %s and in %s; --data names the folder of the four IDX files of "
                     "MNIST or Fashion-MNIST)",
                dir, prefix, kind, sb.buf, dir, raw);
        hn_sb_free(&sb);
    }
    for (int i = 0; i < N_FORMS; i++) free(names[i]);
    free(raw);
    return pick;
}

/* Loads one file of the split; when it does not load and another candidate
 * was there, says so. */
static int load_one(const char *path, const char *other, int ndim, hn_idx *out, hn_err *err) {
    if (hn_idx_load(path, ndim, out, err) == 0) return 0;
    if (other) {
        hn_err e = *err;
        hn_errf(err, "%s (%s is there too, not read: the plain name is read before .gz and the -idx name before "
                     ".idx; move the broken one away)",
                e.msg, other);
    }
    return -1;
}

int hn_idx_set_load(const char *dir_arg, const char *prefix, int classes, hn_idx_set *out, hn_err *err) {
    memset(out, 0, sizeof *out);
    char *dir = xstrdup(dir_arg); /* "MNIST/" names files MNIST/raw/..., not MNIST//raw/... */
    for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--) dir[n - 1] = '\0';
    int rc = -1;
    if (!is_dir(dir)) {
        if (is_file(dir)) {
            char *parent = hn_dirname(dir);
            hn_errf(err, "--data %s: is a file; --data names the folder holding the four IDX files (here %s)", dir,
                    parent);
            free(parent);
        } else {
            hn_errf(err, "--data %s: no such folder", dir);
        }
        goto done;
    }
    out->images_path = find(dir, prefix, "images", 3, &out->images_other, err);
    if (!out->images_path) goto done;
    out->labels_path = find(dir, prefix, "labels", 1, &out->labels_other, err);
    if (!out->labels_path) goto done;
    if (load_one(out->images_path, out->images_other, 3, &out->images, err) != 0) goto done;
    if (load_one(out->labels_path, out->labels_other, 1, &out->labels, err) != 0) goto done;
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
    free(dir);
    if (rc != 0) hn_idx_set_free(out);
    return rc;
}

void hn_idx_set_free(hn_idx_set *s) {
    if (!s) return;
    hn_idx_free(&s->images);
    hn_idx_free(&s->labels);
    free(s->images_path);
    free(s->labels_path);
    free(s->images_other);
    free(s->labels_other);
    memset(s, 0, sizeof *s);
}
