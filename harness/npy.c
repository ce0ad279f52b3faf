/* npy.c: see npy.h. */
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void hn_npy_header(hn_sb *sb, const char *descr, const int64_t *shape, int ndim) {
    hn_sb dict;
    hn_sb_init(&dict);
    hn_sb_addf(&dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim; i++) hn_sb_addf(&dict, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (ndim == 1) hn_sb_addc(&dict, ','); /* (5,) is a tuple, (5) is not */
    hn_sb_adds(&dict, "), }");
    /* magic(6) + version(2) + length(2) + dict + padding + '\n' = multiple of 64 */
    size_t total = 10 + dict.len + 1;
    size_t padded = (total + 63) / 64 * 64;
    while (dict.len + 11 < padded) hn_sb_addc(&dict, ' ');
    hn_sb_addc(&dict, '\n');
    hn_sb_add(sb, "\x93NUMPY\x01\x00", 8);
    unsigned char len[2] = {(unsigned char)(dict.len & 0xff), (unsigned char)(dict.len >> 8)};
    hn_sb_add(sb, len, 2);
    hn_sb_add(sb, dict.buf, dict.len);
    hn_sb_free(&dict);
}

int hn_npy_write(const char *path, const char *descr, const int64_t *shape, int ndim,
                 const void *data, size_t elem_size, hn_err *err) {
    hn_sb head;
    hn_sb_init(&head);
    hn_npy_header(&head, descr, shape, ndim);
    size_t count = 1;
    for (int i = 0; i < ndim; i++) count *= (size_t)shape[i];
    FILE *f = fopen(path, "wb");
    if (!f) {
        hn_sb_free(&head);
        return hn_errf(err, "%s: cannot create: %s", path, strerror(errno));
    }
    int ok = fwrite(head.buf, 1, head.len, f) == head.len;
    ok = ok && (count == 0 || fwrite(data, elem_size, count, f) == count);
    ok = (fclose(f) == 0) && ok;
    hn_sb_free(&head);
    return ok ? 0 : hn_errf(err, "%s: write failed: %s", path, strerror(errno));
}
