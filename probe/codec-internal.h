/* What the codec's own files share, and nothing outside probe/ uses: the
 * slice functions that the streams (codec.c) and the benchmark
 * (codec-bench.c) both run, each stage on its own. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- sizes (codec.c) ---- */

unsigned codec_chroma_width(unsigned width);
bool codec_size_valid(unsigned width, unsigned height);
/* The first row of slice s of slices over height rows (s == slices: height). */
unsigned codec_slice_row(unsigned height, unsigned slices, unsigned s);
/* Rows of the tallest slice. */
unsigned codec_slice_rows_max(unsigned height, unsigned slices);

/* ---- one slice (codec-slice.c) ---- */

/* One row of planes into the packed layout, and back. */
void codec_pack_row(const uint8_t *y, const uint8_t *u, const uint8_t *v, unsigned width, uint8_t *out);
void codec_unpack_row(const uint8_t *in, unsigned width, uint8_t *y, uint8_t *u, uint8_t *v);

/* Stage one of encoding: unpack rows [0, rows) of packed and predict.
 * scratch holds 2 * codec_row_bytes(width) bytes. */
void codec_slice_predict(const uint8_t *packed, unsigned width, unsigned rows, uint8_t *res, uint8_t *scratch);
/* Stage two of encoding: the residuals of a slice into out, cap bytes
 * (codec_coded_max of its samples); *size gets what was written. */
int codec_slice_code(const uint8_t *res, unsigned width, unsigned rows, uint8_t *out, size_t cap, size_t *size);
/* Stage one of decoding: a slice's stream back to residuals. -EBADMSG for a
 * stream that is not exactly as long as its codes. */
int codec_slice_decode(const uint8_t *in, size_t size, unsigned width, unsigned rows, uint8_t *res);
/* Stage two of decoding: residuals back to packed rows; scratch as above. */
void codec_slice_reconstruct(const uint8_t *res, unsigned width, unsigned rows, uint8_t *packed, uint8_t *scratch);

/* Worst case of the coded size of a slice of n samples, in bytes. */
size_t codec_coded_max(size_t n);
