/*
 * png.h: writing small RGB images as PNG files with no library: the image data
 * goes into "stored" (uncompressed) deflate blocks, with the CRC-32 and Adler-32
 * checksums computed here. Files are larger than compressed ones, which does not
 * matter for the debug views this is for (mismatch maps of small cases).
 */
#ifndef HN_PNG_H
#define HN_PNG_H

#include <stdint.h>

#include "util.h"

/* rgb holds height rows of width pixels, 3 bytes each, top row first. */
int hn_png_write_rgb(const char *path, int width, int height, const unsigned char *rgb, hn_err *err);

uint32_t hn_crc32(uint32_t crc, const void *data, size_t n);

#endif
