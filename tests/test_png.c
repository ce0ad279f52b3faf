/* test_png.c: the PNG writer (harness/png.c), read back by Python's zlib. */
#include <unistd.h>

#include "hn_test.h"
#include "png.h"

static void test_crc(void) {
    /* The CRC-32 check value of "123456789". */
    CHECK_INT(hn_crc32(0, "123456789", 9), 0xcbf43926u);
}

static void test_roundtrip(void) {
    const char *dir = getenv("HARNESS_TMP") ? getenv("HARNESS_TMP") : "/tmp";
    hn_mkdirs(dir, NULL);
    char *path = xasprintf("%s/t%d.png", dir, (int)getpid());
    /* Large enough for several stored blocks (65535 bytes each). */
    int w = 200, h = 150;
    unsigned char *rgb = xmalloc((size_t)w * h * 3);
    for (int i = 0; i < w * h * 3; i++) rgb[i] = (unsigned char)(i * 7 + i / 600);
    hn_err err;
    CHECK(hn_png_write_rgb(path, w, h, rgb, &err) == 0);
    char *data;
    size_t n;
    CHECK(hn_read_file(path, &data, &n, &err) == 0);
    CHECK(memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0);
    CHECK(memcmp(data + 12, "IHDR", 4) == 0);
    CHECK_INT(((unsigned char)data[18] << 8) | (unsigned char)data[19], w);
    CHECK_INT(((unsigned char)data[22] << 8) | (unsigned char)data[23], h);
    free(data);
    /* Decode with Python (zlib checks the Adler-32; we compare every pixel). */
    char *raw = xasprintf("%s/t%d.rgb", dir, (int)getpid());
    hn_write_file(raw, rgb, (size_t)w * h * 3, &err);
    char *cmd = xasprintf(
        "python3 -c \"import zlib,struct,sys,binascii\n"
        "d=open('%s','rb').read(); p=8; idat=b''\n"
        "while p < len(d):\n"
        "  n,t=struct.unpack('>I4s',d[p:p+8]); body=d[p+8:p+8+n]\n"
        "  assert struct.unpack('>I',d[p+8+n:p+12+n])[0]==binascii.crc32(t+body)\n"
        "  idat+=body if t==b'IDAT' else b''; p+=12+n\n"
        "z=zlib.decompress(idat); row=%d*3+1\n"
        "pix=b''.join(z[r*row+1:(r+1)*row] for r in range(%d))\n"
        "sys.exit(0 if pix==open('%s','rb').read() else 1)\"",
        path, w, h, raw);
    CHECK_MSG(system(cmd) == 0, "python could not decode %s", path);
    free(cmd);
    unlink(raw);
    unlink(path);
    free(raw);
    free(path);
    free(rgb);
}

int main(void) {
    test_crc();
    test_roundtrip();
    return hn_test_exit();
}
