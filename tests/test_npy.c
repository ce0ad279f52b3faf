/* test_npy.c: the .npy writer (harness/npy.c), read back by numpy (python3-numpy is
 * a dependency: without it the test fails). */
#include <stdint.h>
#include <unistd.h>

#include "hn_test.h"
#include "npy.h"

static void test_header_layout(void) {
    hn_sb sb;
    hn_sb_init(&sb);
    int64_t shape[3] = {2, 3, 4};
    hn_npy_header(&sb, "<f4", shape, 3);
    CHECK(sb.len % 64 == 0);
    CHECK(memcmp(sb.buf, "\x93NUMPY\x01\x00", 8) == 0);
    size_t hlen = (unsigned char)sb.buf[8] | ((size_t)(unsigned char)sb.buf[9] << 8);
    CHECK_INT(hlen + 10, sb.len);
    CHECK(sb.buf[sb.len - 1] == '\n');
    CHECK_CONTAINS(sb.buf + 10, "'descr': '<f4'");
    CHECK_CONTAINS(sb.buf + 10, "'shape': (2, 3, 4)");
    hn_sb_reset(&sb);
    int64_t one[1] = {5};
    hn_npy_header(&sb, "<f8", one, 1);
    CHECK_CONTAINS(sb.buf + 10, "'shape': (5,)"); /* a 1-tuple needs its comma */
    hn_sb_free(&sb);
}

static void test_numpy_reads_it(void) {
    const char *dir = getenv("HARNESS_TMP") ? getenv("HARNESS_TMP") : "/tmp";
    hn_mkdirs(dir, NULL);
    char *path = xasprintf("%s/t%d.npy", dir, (int)getpid());
    float data[2 * 3 * 5];
    for (int i = 0; i < 30; i++) data[i] = (float)i * 0.5f - 3.0f;
    int64_t shape[3] = {2, 3, 5};
    hn_err err;
    CHECK(hn_npy_write(path, "<f4", shape, 3, data, sizeof(float), &err) == 0);
    /* Debian's python3-numpy lives with /usr/bin/python3; else the first python3. */
    const char *py = "/usr/bin/python3";
    char *probe = xasprintf("%s -c 'import numpy' 2>/dev/null", py);
    if (system(probe) != 0) {
        py = "python3";
        free(probe);
        probe = xasprintf("%s -c 'import numpy' 2>/dev/null", py);
    }
    if (system(probe) != 0) {
        CHECK_MSG(0, "numpy not found: the file cannot be read back (install python3-numpy)");
    } else {
        char *cmd = xasprintf(
            "%s -c \"import numpy as np, sys; a = np.load('%s'); "
            "sys.exit(0 if a.shape == (2, 3, 5) and a.dtype == np.float32 and a[1, 2, 4] == 29 * 0.5 - 3 "
            "and a[0, 0, 0] == -3 else 1)\"",
            py, path);
        CHECK_MSG(system(cmd) == 0, "numpy could not read %s back", path);
        free(cmd);
    }
    free(probe);
    unlink(path);
    free(path);
}

int main(void) {
    test_header_layout();
    test_numpy_reads_it();
    return hn_test_exit();
}
