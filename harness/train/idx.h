/*
 * idx.h: reading the IDX files MNIST and Fashion-MNIST are distributed in
 * (gzipped or not: zlib reads both), and the four files of a data set folder.
 *
 * An IDX file is a big-endian header, 0 0 <type> <ndim>, then ndim 32-bit
 * sizes, then the data. Only unsigned bytes (type 0x08) are read: images are
 * idx3 (count, rows, cols), labels idx1 (count).
 *
 * Every error names the file and says what is wrong (missing, not gzip data that
 * inflates, a wrong magic, truncated, extra bytes, counts that disagree between
 * images and labels, a label past the classes); the command turns it into exit 2.
 *
 * Ownership: hn_idx_load fills caller storage; hn_idx_free releases the data
 * (NULL-safe, and on a zeroed hn_idx).
 */
#ifndef HN_TRAIN_IDX_H
#define HN_TRAIN_IDX_H

#include <stdint.h>

#include "util.h"

typedef struct {
    int ndim;
    int32_t dims[4];
    uint8_t *data;       /* dims[0] * ... bytes */
    int64_t size;
} hn_idx;

/* Loads path (.gz or plain) expecting ndim dimensions of unsigned bytes. */
int hn_idx_load(const char *path, int ndim, hn_idx *out, hn_err *err);
void hn_idx_free(hn_idx *x);

/* A data set's split: images (n, rows, cols) and labels (n). */
typedef struct {
    hn_idx images, labels;
    char *images_path, *labels_path;     /* the files read */
    char *images_other, *labels_other;   /* another candidate that was there, not read (or NULL) */
} hn_idx_set;

/* Finds the images and labels of the split (prefix "train" or "t10k") in DIR,
 * or where DIR has none, in DIR/raw: each as <prefix>-images-idx3-ubyte (LeCun)
 * or <prefix>-images.idx3-ubyte (Kaggle, Windows unzips), plain or .gz, as a file
 * or as a folder of that name holding it; the first of that order is read (plain
 * before .gz, the -idx name before .idx). Loads both and checks that they agree
 * (same count) and every label is below classes. Not found: the error lists the
 * names tried. */
int hn_idx_set_load(const char *dir, const char *prefix, int classes, hn_idx_set *out, hn_err *err);
void hn_idx_set_free(hn_idx_set *s);

#endif
