/*
 * npy.h: writing NumPy .npy files (format version 1.0), so inputs, references
 * and outputs can be inspected with numpy.load. Little-endian, C order.
 */
#ifndef HN_NPY_H
#define HN_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* descr is numpy's type string: "<f4", "<f8", "<i4", "<i8". */
int hn_npy_write(const char *path, const char *descr, const int64_t *shape, int ndim,
                 const void *data, size_t elem_size, hn_err *err);

/* Builds the header (magic, version, length, dict, padding) into sb; exposed for
 * tests. The total header length is a multiple of 64. */
void hn_npy_header(hn_sb *sb, const char *descr, const int64_t *shape, int ndim);

#endif
