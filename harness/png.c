/* png.c: see png.h. */
#include "png.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

uint32_t hn_crc32(uint32_t crc, const void *data, size_t n) {
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

static void put32(hn_sb *sb, uint32_t v) {
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                          (unsigned char)v};
    hn_sb_add(sb, b, 4);
}

static void chunk(hn_sb *out, const char type[4], const void *data, size_t n) {
    put32(out, (uint32_t)n);
    size_t start = out->len;
    hn_sb_add(out, type, 4);
    if (n) hn_sb_add(out, data, n);
    put32(out, hn_crc32(0, out->buf + start, n + 4));
}

int hn_png_write_rgb(const char *path, int width, int height, const unsigned char *rgb, hn_err *err) {
    if (width <= 0 || height <= 0) return hn_errf(err, "%s: empty image", path);
    /* Raw scanlines: a filter byte (0, none) then the row. */
    size_t row = (size_t)width * 3 + 1;
    size_t raw_n = row * (size_t)height;
    hn_sb raw;
    hn_sb_init(&raw);
    for (int y = 0; y < height; y++) {
        hn_sb_addc(&raw, 0);
        hn_sb_add(&raw, rgb + (size_t)y * width * 3, (size_t)width * 3);
    }
    /* zlib stream: header, stored blocks of at most 65535 bytes, Adler-32. */
    hn_sb z;
    hn_sb_init(&z);
    hn_sb_add(&z, "\x78\x01", 2);
    for (size_t off = 0; off < raw_n || off == 0;) {
        size_t n = raw_n - off > 65535 ? 65535 : raw_n - off;
        unsigned char head[5] = {(unsigned char)(off + n == raw_n), (unsigned char)(n & 0xff),
                                 (unsigned char)(n >> 8), (unsigned char)(~n & 0xff),
                                 (unsigned char)((~n >> 8) & 0xff)};
        hn_sb_add(&z, head, 5);
        hn_sb_add(&z, raw.buf + off, n);
        off += n;
        if (off == raw_n) break;
    }
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < raw_n; i++) {
        a = (a + (unsigned char)raw.buf[i]) % 65521;
        b = (b + a) % 65521;
    }
    put32(&z, (b << 16) | a);

    hn_sb png;
    hn_sb_init(&png);
    hn_sb_add(&png, "\x89PNG\r\n\x1a\n", 8);
    unsigned char ihdr[13];
    uint32_t w = (uint32_t)width, h = (uint32_t)height;
    ihdr[0] = (unsigned char)(w >> 24), ihdr[1] = (unsigned char)(w >> 16), ihdr[2] = (unsigned char)(w >> 8),
    ihdr[3] = (unsigned char)w;
    ihdr[4] = (unsigned char)(h >> 24), ihdr[5] = (unsigned char)(h >> 16), ihdr[6] = (unsigned char)(h >> 8),
    ihdr[7] = (unsigned char)h;
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* adaptive filtering */
    ihdr[12] = 0; /* no interlace */
    chunk(&png, "IHDR", ihdr, sizeof ihdr);
    chunk(&png, "IDAT", z.buf, z.len);
    chunk(&png, "IEND", NULL, 0);
    int rc = hn_write_file(path, png.buf, png.len, err);
    hn_sb_free(&raw);
    hn_sb_free(&z);
    hn_sb_free(&png);
    return rc;
}
