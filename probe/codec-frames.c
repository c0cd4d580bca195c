/* The test sequence: frames of moving shapes over gradients, generated from
 * a seed, so that every run codes the same pictures without a file. */
#include "codec.h"

#include <errno.h>
#include <stdlib.h>

#include "codec-internal.h"

static uint64_t codec_splitmix(uint64_t *state) {
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

static uint8_t codec_clamp(int v) {
	return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

struct codec_shape {
	int x, y, w, h;           /* at picture 0 */
	int dx, dy;               /* movement per picture */
	bool ellipse;
	uint8_t luma, cb, cr;
};

#define CODEC_SHAPES 12

static void codec_make_shapes(uint64_t seed, unsigned width, unsigned height, struct codec_shape *s) {
	uint64_t st = seed;

	for (unsigned i = 0; i < CODEC_SHAPES; i++) {
		uint64_t r = codec_splitmix(&st), q = codec_splitmix(&st);

		s[i].w = (int)(width / 16 + r % (width / 4 + 1));
		s[i].h = (int)(height / 16 + (r >> 16) % (height / 4 + 1));
		s[i].x = (int)((r >> 32) % width);
		s[i].y = (int)((r >> 48) % height);
		s[i].dx = (int)(q % 9) - 4;
		s[i].dy = (int)((q >> 8) % 7) - 3;
		s[i].ellipse = (q >> 16) & 1;
		s[i].luma = (uint8_t)(q >> 24);
		s[i].cb = (uint8_t)(64 + (q >> 32) % 128);
		s[i].cr = (uint8_t)(64 + (q >> 40) % 128);
	}
}

static int codec_wrap(long v, unsigned range) {
	long m = v % (long)range;

	return (int)(m < 0 ? m + (long)range : m);
}

static bool codec_shape_covers(const struct codec_shape *s, int x0, int y0, int x, int y) {
	long dx, dy, rx, ry;

	if (!s->ellipse)
		return true;
	/* inside the ellipse inscribed in the box: ((x-cx)/rx)^2 + ((y-cy)/ry)^2 <= 1 */
	rx = s->w / 2 + 1;
	ry = s->h / 2 + 1;
	dx = x - (x0 + s->w / 2);
	dy = y - (y0 + s->h / 2);
	return dx * dx * ry * ry + dy * dy * rx * rx <= rx * rx * ry * ry;
}

/* Draws shape s at picture index onto the planes; chroma sample j of a row
 * sits on pixel 2j, so a shape covers a chroma sample when it covers that pixel. */
static void codec_draw_shape(const struct codec_shape *s, unsigned index, unsigned width, unsigned height,
			     uint8_t *y, uint8_t *u, uint8_t *v) {
	unsigned cw = codec_chroma_width(width);
	int x0 = codec_wrap(s->x + (long)s->dx * index, width);
	int y0 = codec_wrap(s->y + (long)s->dy * index, height);

	for (int row = y0; row < y0 + s->h && row < (int)height; row++)
		for (int x = x0; x < x0 + s->w && x < (int)width; x++) {
			if (!codec_shape_covers(s, x0, y0, x, row))
				continue;
			/* a gentle ramp inside, so a shape is not one flat value */
			y[(size_t)row * width + x] = (uint8_t)(s->luma + (x - x0) / 8);
			if ((x & 1) == 0) {
				u[(size_t)row * cw + x / 2] = s->cb;
				v[(size_t)row * cw + x / 2] = s->cr;
			}
		}
}

int codec_frame_generate(uint8_t *frame, unsigned width, unsigned height, uint64_t seed, unsigned index) {
	unsigned cw = codec_chroma_width(width);
	struct codec_shape shapes[CODEC_SHAPES];
	uint8_t *y, *u, *v;
	uint64_t noise = seed ^ ((uint64_t)index << 32 | index);

	if (!frame || !codec_size_valid(width, height))
		return -EINVAL;
	y = malloc((size_t)width * height);
	u = malloc((size_t)cw * height);
	v = malloc((size_t)cw * height);
	if (!y || !u || !v) {
		free(y);
		free(u);
		free(v);
		return -ENOMEM;
	}
	/* Background: a diagonal gradient that drifts from picture to picture. */
	for (unsigned r = 0; r < height; r++) {
		for (unsigned x = 0; x < width; x++)
			y[(size_t)r * width + x] = (uint8_t)(30 + x * 100 / width + r * 60 / height + (index * 2) % 40);
		for (unsigned j = 0; j < cw; j++) {
			u[(size_t)r * cw + j] = (uint8_t)(108 + j * 40 / cw);
			v[(size_t)r * cw + j] = (uint8_t)(108 + r * 40 / height);
		}
	}
	codec_make_shapes(seed, width, height, shapes);
	for (unsigned i = 0; i < CODEC_SHAPES; i++)
		codec_draw_shape(&shapes[i], index, width, height, y, u, v);
	/* A band of thin vertical stripes: edges everywhere, hard for any predictor. */
	for (unsigned r = height / 2; r < height / 2 + height / 10; r++)
		for (unsigned x = width / 8; x < width / 3; x++)
			if (((x + index) / 3) & 1)
				y[(size_t)r * width + x] = (uint8_t)(y[(size_t)r * width + x] / 2 + 100);
	/* Sensor noise: a few levels on luma, one on chroma. */
	for (size_t i = 0; i < (size_t)width * height; i++) {
		uint64_t n = codec_splitmix(&noise);
		y[i] = codec_clamp(y[i] + (int)(n % 7) - 3);
		if (i < (size_t)cw * height) {
			u[i] = codec_clamp(u[i] + (int)((n >> 8) % 3) - 1);
			v[i] = codec_clamp(v[i] + (int)((n >> 16) % 3) - 1);
		}
	}
	for (unsigned r = 0; r < height; r++)
		codec_pack_row(y + (size_t)r * width, u + (size_t)r * cw, v + (size_t)r * cw, width,
			       frame + r * codec_row_bytes(width));
	free(y);
	free(u);
	free(v);
	return 0;
}
