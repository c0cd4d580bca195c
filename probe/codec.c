/* The codec's streams: a frame coded in slices, one thread, with the header
 * that says its size; and the sizes every part of the codec shares. */
#include "codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec-internal.h"

#define CODEC_MAGIC          "CCXV"
#define CODEC_VERSION        1
#define CODEC_HEADER_BYTES   20     /* magic, version, 3 reserved, width, height, slices */

size_t codec_row_bytes(unsigned width) {
	return (size_t)width + 2 * (((size_t)width + 1) / 2);
}

size_t codec_frame_bytes(unsigned width, unsigned height) {
	return codec_row_bytes(width) * height;
}

unsigned codec_chroma_width(unsigned width) {
	return (width + 1) / 2;
}

bool codec_size_valid(unsigned width, unsigned height) {
	return width >= 1 && width <= CODEC_WIDTH_MAX && height >= 1 && height <= CODEC_HEIGHT_MAX;
}

/* ---- single-threaded streams ------------------------------------------- */

unsigned codec_slice_row(unsigned height, unsigned slices, unsigned s) {
	return (unsigned)((uint64_t)height * s / slices);
}

static void codec_put_le32(uint8_t *p, uint32_t v) {
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t codec_get_le32(const uint8_t *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

unsigned codec_slice_rows_max(unsigned height, unsigned slices) {
	return (height + slices - 1) / slices;
}

int codec_encode(const uint8_t *frame, unsigned width, unsigned height, unsigned slices, uint8_t **out,
		 size_t *out_size) {
	size_t rb = codec_row_bytes(width), header, cap, len;
	uint8_t *buf, *res, *scratch, *shrunk;
	int r = 0;

	if (!frame || !out || !out_size || !codec_size_valid(width, height) || slices < 1 || slices > height)
		return -EINVAL;
	header = CODEC_HEADER_BYTES + 4 * (size_t)slices;
	cap = header + slices * codec_coded_max(codec_slice_rows_max(height, slices) * rb);
	buf = malloc(cap);
	res = malloc(codec_slice_rows_max(height, slices) * rb);
	scratch = malloc(2 * rb);
	if (!buf || !res || !scratch) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(buf, CODEC_MAGIC, 4);
	buf[4] = CODEC_VERSION;
	buf[5] = buf[6] = buf[7] = 0;
	codec_put_le32(buf + 8, width);
	codec_put_le32(buf + 12, height);
	codec_put_le32(buf + 16, slices);
	len = header;
	for (unsigned s = 0; s < slices && r >= 0; s++) {
		unsigned r0 = codec_slice_row(height, slices, s), rows = codec_slice_row(height, slices, s + 1) - r0;
		size_t n = 0;

		codec_slice_predict(frame + r0 * rb, width, rows, res, scratch);
		r = codec_slice_code(res, width, rows, buf + len, cap - len, &n);
		codec_put_le32(buf + CODEC_HEADER_BYTES + 4 * (size_t)s, (uint32_t)n);
		len += n;
	}
	if (r < 0)
		goto out;
	shrunk = realloc(buf, len);
	*out = shrunk ? shrunk : buf;
	*out_size = len;
	buf = NULL;
out:
	free(buf);
	free(res);
	free(scratch);
	return r;
}

int codec_stream_info(const uint8_t *in, size_t size, unsigned *width, unsigned *height, unsigned *slices) {
	uint32_t w, h, s;

	if (!in || size < CODEC_HEADER_BYTES || memcmp(in, CODEC_MAGIC, 4) != 0 || in[4] != CODEC_VERSION)
		return -EBADMSG;
	w = codec_get_le32(in + 8);
	h = codec_get_le32(in + 12);
	s = codec_get_le32(in + 16);
	if (!codec_size_valid(w, h) || s < 1 || s > h || size < CODEC_HEADER_BYTES + 4 * (size_t)s)
		return -EBADMSG;
	*width = w;
	*height = h;
	*slices = s;
	return 0;
}

int codec_decode(const uint8_t *in, size_t size, uint8_t *frame, size_t frame_size) {
	unsigned width, height, slices;
	uint8_t *res = NULL, *scratch = NULL;
	size_t rb, pos;
	int r = codec_stream_info(in, size, &width, &height, &slices);

	if (r < 0)
		return r;
	if (!frame || frame_size != codec_frame_bytes(width, height))
		return -ENOSPC;
	rb = codec_row_bytes(width);
	res = malloc(codec_slice_rows_max(height, slices) * rb);
	scratch = malloc(2 * rb);
	if (!res || !scratch) {
		r = -ENOMEM;
		goto out;
	}
	pos = CODEC_HEADER_BYTES + 4 * (size_t)slices;
	for (unsigned s = 0; s < slices; s++) {
		unsigned r0 = codec_slice_row(height, slices, s), rows = codec_slice_row(height, slices, s + 1) - r0;
		size_t n = codec_get_le32(in + CODEC_HEADER_BYTES + 4 * (size_t)s);

		if (n > size - pos) {
			r = -EBADMSG;
			goto out;
		}
		r = codec_slice_decode(in + pos, n, width, rows, res);
		if (r < 0)
			goto out;
		codec_slice_reconstruct(res, width, rows, frame + r0 * rb, scratch);
		pos += n;
	}
	if (pos != size)
		r = -EBADMSG;
out:
	free(res);
	free(scratch);
	return r;
}
