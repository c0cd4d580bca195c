#include "codec.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CODEC_MAGIC          "CCXV"
#define CODEC_VERSION        1
#define CODEC_HEADER_BYTES   20     /* magic, version, 3 reserved, width, height, slices */

/* Golomb-Rice: a quotient of CODEC_ESCAPE or more is sent as CODEC_ESCAPE
 * zeros, a one and the raw 8-bit value, so that no code is longer than 25
 * bits however badly the adaptation guessed. */
#define CODEC_ESCAPE         16
#define CODEC_BITS_MAX       (CODEC_ESCAPE + 1 + 8)
#define CODEC_K_MAX          7      /* values are < 256: a larger k only adds bits */
#define CODEC_CONTEXTS       8

size_t codec_row_bytes(unsigned width) {
	return (size_t)width + 2 * (((size_t)width + 1) / 2);
}

size_t codec_frame_bytes(unsigned width, unsigned height) {
	return codec_row_bytes(width) * height;
}

static unsigned codec_chroma_width(unsigned width) {
	return (width + 1) / 2;
}

static bool codec_size_valid(unsigned width, unsigned height) {
	return width >= 1 && width <= CODEC_WIDTH_MAX && height >= 1 && height <= CODEC_HEIGHT_MAX;
}

/* ---- packing -------------------------------------------------------------- */

static void codec_pack_row(const uint8_t *y, const uint8_t *u, const uint8_t *v, unsigned width, uint8_t *out) {
	unsigned pairs = width / 2;

	for (unsigned j = 0; j < pairs; j++) {
		out[0] = y[2 * j];
		out[1] = u[j];
		out[2] = y[2 * j + 1];
		out[3] = v[j];
		out += 4;
	}
	if (width & 1) {
		out[0] = y[width - 1];
		out[1] = u[pairs];
		out[2] = v[pairs];
	}
}

static void codec_unpack_row(const uint8_t *in, unsigned width, uint8_t *y, uint8_t *u, uint8_t *v) {
	unsigned pairs = width / 2;

	for (unsigned j = 0; j < pairs; j++) {
		y[2 * j] = in[0];
		u[j] = in[1];
		y[2 * j + 1] = in[2];
		v[j] = in[3];
		in += 4;
	}
	if (width & 1) {
		y[width - 1] = in[0];
		u[pairs] = in[1];
		v[pairs] = in[2];
	}
}

/* ---- the test sequence --------------------------------------------------- */

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

/* ---- prediction ------------------------------------------------------------ */

/* Signed residuals -1, 1, -2, 2 ... as 1, 2, 3, 4 ...: small magnitudes first,
 * which is what Golomb-Rice codes cheaply. Works on the residual modulo 256. */
static uint8_t codec_zigzag(uint8_t d) {
	int8_t e = (int8_t)d;

	return (uint8_t)((uint8_t)(e * 2) ^ (uint8_t)(e >> 7));
}

static uint8_t codec_unzigzag(uint8_t z) {
	return (uint8_t)((z >> 1) ^ (uint8_t)-(z & 1));
}

/* LOCO-I's median edge detector: picks left or above at an edge, the plane
 * through the three neighbours elsewhere; that is a + b - c clamped to
 * [min(a, b), max(a, b)]. */
static inline int codec_med(int a, int b, int c) {
	int lo = a < b ? a : b, hi = a < b ? b : a, p = a + b - c;

	/* the same as LOCO-I's three cases, without branches that noise
	 * would make unpredictable */
	p = p < lo ? lo : p;
	return p > hi ? hi : p;
}

/* The first row of a slice has nothing above it, so that slices decode
 * independently: it predicts from the left only. */
static void codec_predict_row(const uint8_t *cur, const uint8_t *prev, unsigned len, uint8_t *out) {
	if (!prev) {
		uint8_t a = 128;
		for (unsigned x = 0; x < len; x++) {
			out[x] = codec_zigzag((uint8_t)(cur[x] - a));
			a = cur[x];
		}
		return;
	}
	out[0] = codec_zigzag((uint8_t)(cur[0] - prev[0]));
	for (unsigned x = 1; x < len; x++)
		out[x] = codec_zigzag((uint8_t)(cur[x] - codec_med(cur[x - 1], prev[x], prev[x - 1])));
}

static void codec_unpredict_row(const uint8_t *res, const uint8_t *prev, unsigned len, uint8_t *cur) {
	if (!prev) {
		uint8_t a = 128;
		for (unsigned x = 0; x < len; x++)
			a = cur[x] = (uint8_t)(a + codec_unzigzag(res[x]));
		return;
	}
	cur[0] = (uint8_t)(prev[0] + codec_unzigzag(res[0]));
	for (unsigned x = 1; x < len; x++)
		cur[x] = (uint8_t)(codec_med(cur[x - 1], prev[x], prev[x - 1]) + codec_unzigzag(res[x]));
}

/* A slice's residuals are planar: rows x width of Y, then rows x chroma
 * width of U, then of V; as many bytes as the packed rows. */
struct codec_planes {
	unsigned len[3];
	size_t offset[3];
};

static void codec_planes_of(unsigned width, unsigned rows, struct codec_planes *p) {
	unsigned cw = codec_chroma_width(width);

	p->len[0] = width;
	p->len[1] = p->len[2] = cw;
	p->offset[0] = 0;
	p->offset[1] = (size_t)width * rows;
	p->offset[2] = p->offset[1] + (size_t)cw * rows;
}

/* Stage one of encoding: unpack rows [0, rows) of packed and predict.
 * scratch holds 2 * codec_row_bytes(width) bytes. */
static void codec_slice_predict(const uint8_t *packed, unsigned width, unsigned rows, uint8_t *res,
				uint8_t *scratch) {
	size_t rb = codec_row_bytes(width);
	uint8_t *line[2] = { scratch, scratch + rb };
	struct codec_planes p;

	codec_planes_of(width, rows, &p);
	for (unsigned r = 0; r < rows; r++) {
		uint8_t *cur = line[r & 1], *prev = line[(r & 1) ^ 1];
		size_t off = 0;

		codec_unpack_row(packed + r * rb, width, cur, cur + width, cur + width + p.len[1]);
		for (unsigned k = 0; k < 3; k++) {
			codec_predict_row(cur + off, r ? prev + off : NULL, p.len[k],
					  res + p.offset[k] + (size_t)r * p.len[k]);
			off += p.len[k];
		}
	}
}

/* Stage two of decoding: residuals back to packed rows. */
static void codec_slice_reconstruct(const uint8_t *res, unsigned width, unsigned rows, uint8_t *packed,
				    uint8_t *scratch) {
	size_t rb = codec_row_bytes(width);
	uint8_t *line[2] = { scratch, scratch + rb };
	struct codec_planes p;

	codec_planes_of(width, rows, &p);
	for (unsigned r = 0; r < rows; r++) {
		uint8_t *cur = line[r & 1], *prev = line[(r & 1) ^ 1];
		size_t off = 0;

		for (unsigned k = 0; k < 3; k++) {
			codec_unpredict_row(res + p.offset[k] + (size_t)r * p.len[k], r ? prev + off : NULL,
					    p.len[k], cur + off);
			off += p.len[k];
		}
		codec_pack_row(cur, cur + width, cur + width + p.len[1], width, packed + r * rb);
	}
}

/* ---- adaptive Golomb-Rice ---------------------------------------------- */

/* Each context keeps 16 times a moving average of its residuals (each new
 * residual weighs 1/16): no division and no loop to find the Rice parameter,
 * which matters because this runs for every sample. */
struct codec_context {
	unsigned mean16;
};

static void codec_contexts_reset(struct codec_context *c) {
	for (unsigned i = 0; i < CODEC_CONTEXTS; i++)
		c[i].mean16 = 16 * 4;
}

/* Bits needed for v, 0 for 0; without a branch, which noise would make
 * unpredictable in the per-sample loops. */
static inline unsigned codec_bit_length(unsigned v) {
	return 31 - (unsigned)__builtin_clz(2 * v | 1);
}

/* The context is how busy the neighbourhood is (left and above residuals),
 * on a log scale: flat areas and edges keep separate statistics. */
static inline unsigned codec_context_of(unsigned left, unsigned above) {
	unsigned b = codec_bit_length(left + above);

	return b < CODEC_CONTEXTS ? b : CODEC_CONTEXTS - 1;
}

/* The Rice parameter for the context's mean m: about log2(m), which is what
 * a geometric distribution of that mean wants. */
static inline unsigned codec_rice_k(const struct codec_context *c) {
	unsigned k = codec_bit_length(c->mean16 >> 5);

	return k < CODEC_K_MAX ? k : CODEC_K_MAX;
}

static inline void codec_context_update(struct codec_context *c, unsigned z) {
	c->mean16 += z - (c->mean16 >> 4);
}

/* What the first row of a slice has above it. */
static const uint8_t codec_zero_row[CODEC_WIDTH_MAX];

/* Room the writer needs for one row of len samples: every code at its
 * longest, plus the 8 bytes that each write stores. */
static size_t codec_row_room(size_t len) {
	return len * CODEC_BITS_MAX / 8 + 16;
}

/* Worst case of the coded size of a slice of n samples, in bytes. */
static size_t codec_coded_max(size_t n) {
	return codec_row_room(n) + 8;
}

struct codec_bitwriter {
	uint8_t *p, *end;
	uint64_t acc;             /* its low n bits are not yet complete bytes */
	unsigned n;               /* < 8 between writes */
};

/* Stores 8 bytes every time and moves on by the complete ones: no branch
 * per code. The row-level room check makes the overhang safe. */
static inline void codec_put(struct codec_bitwriter *w, uint32_t value, unsigned len) {
	uint64_t out;

	w->acc = (w->acc << len) | value;
	w->n += len;
	out = __builtin_bswap64(w->acc << (64 - w->n));
	memcpy(w->p, &out, 8);
	w->p += w->n >> 3;
	w->n &= 7;
}

/* Stage two of encoding: the residuals of a slice into out. */
static int codec_slice_code(const uint8_t *res, unsigned width, unsigned rows, uint8_t *out, size_t cap,
			    size_t *size) {
	struct codec_bitwriter w = { .p = out, .end = out + cap };
	struct codec_context ctx[CODEC_CONTEXTS];
	struct codec_planes p;

	codec_planes_of(width, rows, &p);
	for (unsigned k = 0; k < 3; k++) {
		const uint8_t *plane = res + p.offset[k];
		unsigned len = p.len[k];

		codec_contexts_reset(ctx);
		for (unsigned r = 0; r < rows; r++) {
			const uint8_t *row = plane + (size_t)r * len, *above = r ? row - len : codec_zero_row;
			unsigned left = 0;

			if ((size_t)(w.end - w.p) < codec_row_room(len))
				return -ENOSPC;
			for (unsigned x = 0; x < len; x++) {
				unsigned z = row[x];
				struct codec_context *c = &ctx[codec_context_of(left, above[x])];
				unsigned kk = codec_rice_k(c), q = z >> kk;

				/* q zeros, a one, then the k low bits: one write */
				if (__builtin_expect(q < CODEC_ESCAPE, 1))
					codec_put(&w, (1u << kk) | (z & ((1u << kk) - 1)), q + 1 + kk);
				else
					codec_put(&w, 1u << 8 | z, CODEC_ESCAPE + 1 + 8);
				codec_context_update(c, z);
				left = z;
			}
		}
	}
	/* the last partial byte is already stored, padded with zeros */
	if (w.n)
		w.p++;
	*size = (size_t)(w.p - out);
	return 0;
}

struct codec_bitreader {
	const uint8_t *start, *p, *end;
	uint64_t acc;             /* n valid bits, in its high bits; zeros below */
	unsigned n;
	size_t past_end;          /* zero bytes made up after the end */
};

static inline void codec_refill(struct codec_bitreader *br) {
	if (__builtin_expect(br->end - br->p >= 8, 1)) {
		uint64_t v;
		memcpy(&v, br->p, 8);
		/* Bits of a partly taken byte are ORed in again at the same place
		 * by the next refill: the same bits, so no harm. */
		br->acc |= __builtin_bswap64(v) >> br->n;
		br->p += (63 - br->n) >> 3;
		br->n |= 56;
		return;
	}
	while (br->n <= 56) {
		uint64_t byte = 0;
		if (br->p < br->end)
			byte = *br->p++;
		else
			br->past_end++;
		br->acc |= byte << (56 - br->n);
		br->n += 8;
	}
}

static inline void codec_skip(struct codec_bitreader *br, unsigned len) {
	br->acc <<= len;
	br->n -= len;
}

/* Bits consumed so far, counting made-up ones. */
static size_t codec_bits_read(const struct codec_bitreader *br) {
	return ((size_t)(br->p - br->start) + br->past_end) * 8 - br->n;
}

/* Stage one of decoding: a slice's stream back to residuals. The stream must
 * be exactly as long as its codes, padded with zero bits: a slice size that
 * does not fit its data means a damaged stream. */
static int codec_slice_decode(const uint8_t *in, size_t size, unsigned width, unsigned rows, uint8_t *res) {
	struct codec_bitreader br = { .start = in, .p = in, .end = in + size };
	struct codec_context ctx[CODEC_CONTEXTS];
	struct codec_planes p;
	unsigned pad;
	size_t bits;

	codec_planes_of(width, rows, &p);
	for (unsigned k = 0; k < 3; k++) {
		uint8_t *plane = res + p.offset[k];
		unsigned len = p.len[k];

		codec_contexts_reset(ctx);
		for (unsigned r = 0; r < rows; r++) {
			uint8_t *row = plane + (size_t)r * len;
			const uint8_t *above = r ? row - len : codec_zero_row;
			unsigned left = 0;

			for (unsigned x = 0; x < len; x++) {
				struct codec_context *c = &ctx[codec_context_of(left, above[x])];
				unsigned kk = codec_rice_k(c), q, z;

				codec_refill(&br);
				/* acc | 1: an all-zero window reads as 63 zeros, an error */
				q = (unsigned)__builtin_clzll(br.acc | 1);
				if (__builtin_expect(q < CODEC_ESCAPE, 1)) {
					/* the k bits after the one; >> 1 >> (63 - k) is 0 for k = 0 */
					z = q << kk | (unsigned)((br.acc << (q + 1)) >> 1 >> (63 - kk));
					codec_skip(&br, q + 1 + kk);
				} else if (q == CODEC_ESCAPE) {
					z = (unsigned)((br.acc << (q + 1)) >> 56);
					codec_skip(&br, CODEC_ESCAPE + 1 + 8);
				} else {
					return -EBADMSG;
				}
				if (z > 255)
					return -EBADMSG;
				row[x] = (uint8_t)z;
				codec_context_update(c, z);
				left = z;
			}
			if (br.past_end > 8)
				return -EBADMSG;
		}
	}
	bits = codec_bits_read(&br);
	if ((bits + 7) / 8 != size)
		return -EBADMSG;
	/* Padding bits must be zero: then no bit of a slice goes unchecked. */
	pad = (unsigned)((8 - bits % 8) % 8);
	if (pad && br.acc >> (64 - pad))
		return -EBADMSG;
	return 0;
}

/* ---- single-threaded streams ------------------------------------------- */

static unsigned codec_slice_row(unsigned height, unsigned slices, unsigned s) {
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

/* Rows of the tallest slice. */
static unsigned codec_slice_rows_max(unsigned height, unsigned slices) {
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

/* ---- the multi-threaded benchmark -------------------------------------- */

void codec_bench_config_init(struct codec_bench_config *c) {
	*c = (struct codec_bench_config){
		.width = 1280,
		.height = 720,
		.threads = 4,
		.slices = 8,
		.sources = 4,
		.frames = 240,
		.seed = 1,
	};
}

struct codec_bench {
	struct codec_bench_config c;
	size_t row_bytes, frame_bytes, slice_cap;
	uint8_t *src;             /* sources x frame_bytes */
	uint8_t *ref;             /* sources x slices x slice_cap: the reference streams */
	size_t *ref_size;
	uint8_t *enc;             /* slots x slices x slice_cap: what encode runs write */
	size_t *enc_size;
	unsigned *enc_frame;      /* the frame each slot last held in an encode run */
	uint8_t *res;             /* slots x frame_bytes: residuals between the two stages */
	uint8_t *dec;             /* slots x frame_bytes: decoded frames */
	size_t compressed;
};

static void codec_slice_bounds(const struct codec_bench *b, unsigned slice, unsigned *r0, unsigned *rows) {
	*r0 = codec_slice_row(b->c.height, b->c.slices, slice);
	*rows = codec_slice_row(b->c.height, b->c.slices, slice + 1) - *r0;
}

static bool codec_bench_config_valid(const struct codec_bench_config *c) {
	return codec_size_valid(c->width, c->height) && c->threads >= 1 && c->threads <= 1024 &&
	       c->slices >= 1 && c->slices <= c->height && c->sources >= 1 && c->sources <= 256 &&
	       c->frames >= 1 && (uint64_t)c->frames * c->slices < UINT_MAX;
}

/* The reference: every source coded by the same slice functions, one thread. */
static int codec_bench_reference(struct codec_bench *b) {
	uint8_t *scratch = malloc(2 * b->row_bytes);
	int r = 0;

	if (!scratch)
		return -ENOMEM;
	b->compressed = 0;
	for (unsigned f = 0; f < b->c.sources && r >= 0; f++)
		for (unsigned s = 0; s < b->c.slices && r >= 0; s++) {
			size_t i = (size_t)f * b->c.slices + s;
			unsigned r0, rows;

			codec_slice_bounds(b, s, &r0, &rows);
			codec_slice_predict(b->src + f * b->frame_bytes + r0 * b->row_bytes, b->c.width, rows, b->res,
					    scratch);
			r = codec_slice_code(b->res, b->c.width, rows, b->ref + i * b->slice_cap, b->slice_cap,
					     &b->ref_size[i]);
			b->compressed += b->ref_size[i];
		}
	free(scratch);
	return r;
}

int codec_bench_new(const struct codec_bench_config *c, struct codec_bench **ret) {
	struct codec_bench *b;
	size_t n_slices;
	int r;

	if (!c || !codec_bench_config_valid(c))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->c = *c;
	b->row_bytes = codec_row_bytes(c->width);
	b->frame_bytes = codec_frame_bytes(c->width, c->height);
	b->slice_cap = codec_coded_max(codec_slice_rows_max(c->height, c->slices) * b->row_bytes);
	n_slices = (size_t)c->sources * c->slices;
	b->src = malloc(c->sources * b->frame_bytes);
	b->ref = malloc(n_slices * b->slice_cap);
	b->ref_size = calloc(n_slices, sizeof(size_t));
	b->enc = malloc(n_slices * b->slice_cap);
	b->enc_size = calloc(n_slices, sizeof(size_t));
	b->enc_frame = calloc(c->sources, sizeof(unsigned));
	b->res = malloc(c->sources * b->frame_bytes);
	b->dec = malloc(c->sources * b->frame_bytes);
	if (!b->src || !b->ref || !b->ref_size || !b->enc || !b->enc_size || !b->enc_frame || !b->res || !b->dec) {
		codec_bench_free(b);
		return -ENOMEM;
	}
	for (unsigned f = 0; f < c->sources; f++) {
		r = codec_frame_generate(b->src + f * b->frame_bytes, c->width, c->height, c->seed, f);
		if (r < 0) {
			codec_bench_free(b);
			return r;
		}
	}
	r = codec_bench_reference(b);
	if (r < 0) {
		codec_bench_free(b);
		return r;
	}
	*ret = b;
	return 0;
}

void codec_bench_free(struct codec_bench *b) {
	if (!b)
		return;
	free(b->src);
	free(b->ref);
	free(b->ref_size);
	free(b->enc);
	free(b->enc_size);
	free(b->enc_frame);
	free(b->res);
	free(b->dec);
	free(b);
}

double codec_bench_compression(const struct codec_bench *b) {
	return (double)b->compressed / ((double)b->c.sources * (double)b->frame_bytes);
}

/* One timed run. Jobs are (frame, slice) numbered frame * slices + slice and
 * claimed in that order; a frame may start only when the slot it will use
 * (frame modulo sources) is free, so at most `sources` frames are in flight.
 * Every worker owns a queue of second-stage jobs that its left neighbour
 * fills. One lock guards all of it: a job is a slice of tens of thousands of
 * pixels, so the lock is taken a few thousand times a second at most. */
struct codec_slot {
	unsigned frame;           /* UINT_MAX while never used */
	unsigned remaining;       /* slices of that frame not finished */
};

struct codec_queue {
	unsigned *jobs;
	unsigned head, count, cap;
};

struct codec_run {
	struct codec_bench *b;
	bool decode;
	unsigned threads;
	pthread_mutex_t lock;
	pthread_cond_t *wake;     /* one per worker, so a hand-off wakes only its receiver */
	struct codec_queue *queues;
	struct codec_slot *slots;
	unsigned next, total, done;
	int error;
};

struct codec_worker {
	struct codec_run *run;
	unsigned index;
	uint8_t *scratch;
	pthread_t thread;
};

static bool codec_queue_pop(struct codec_queue *q, unsigned *job) {
	if (q->count == 0)
		return false;
	*job = q->jobs[q->head];
	q->head = (q->head + 1) % q->cap;
	q->count--;
	return true;
}

static void codec_queue_push(struct codec_queue *q, unsigned job) {
	/* cannot overflow: cap is the number of slices that can be in flight */
	q->jobs[(q->head + q->count) % q->cap] = job;
	q->count++;
}

static void codec_run_wake_all(struct codec_run *run) {
	for (unsigned i = 0; i < run->threads; i++)
		pthread_cond_signal(&run->wake[i]);
}

static int codec_run_stage1(struct codec_run *run, struct codec_worker *w, unsigned job) {
	struct codec_bench *b = run->b;
	unsigned frame = job / b->c.slices, slice = job % b->c.slices, r0, rows;
	unsigned slot = frame % b->c.sources, source = frame % b->c.sources;
	size_t i = (size_t)source * b->c.slices + slice;
	uint8_t *res;

	codec_slice_bounds(b, slice, &r0, &rows);
	res = b->res + slot * b->frame_bytes + r0 * b->row_bytes;
	if (!run->decode) {
		codec_slice_predict(b->src + source * b->frame_bytes + r0 * b->row_bytes, b->c.width, rows, res,
				    w->scratch);
		return 0;
	}
	return codec_slice_decode(b->ref + i * b->slice_cap, b->ref_size[i], b->c.width, rows, res);
}

static int codec_run_stage2(struct codec_run *run, struct codec_worker *w, unsigned job) {
	struct codec_bench *b = run->b;
	unsigned frame = job / b->c.slices, slice = job % b->c.slices, r0, rows;
	unsigned slot = frame % b->c.sources, source = frame % b->c.sources;
	const uint8_t *res;
	uint8_t *out;
	size_t i = (size_t)slot * b->c.slices + slice;

	codec_slice_bounds(b, slice, &r0, &rows);
	res = b->res + slot * b->frame_bytes + r0 * b->row_bytes;
	if (!run->decode)
		return codec_slice_code(res, b->c.width, rows, b->enc + i * b->slice_cap, b->slice_cap,
					&b->enc_size[i]);
	out = b->dec + slot * b->frame_bytes + r0 * b->row_bytes;
	codec_slice_reconstruct(res, b->c.width, rows, out, w->scratch);
	/* Bit for bit, every frame: a codec that is fast and wrong must not
	 * produce a number. */
	if (memcmp(out, b->src + source * b->frame_bytes + r0 * b->row_bytes, (size_t)rows * b->row_bytes) != 0)
		return -EBADMSG;
	return 0;
}

/* With the lock held: may job start now? Claims its slot if so. */
static bool codec_run_claim(struct codec_run *run, unsigned job) {
	unsigned frame = job / run->b->c.slices;
	struct codec_slot *slot = &run->slots[frame % run->b->c.sources];

	if (slot->frame == frame)
		return true;
	if (slot->remaining > 0)
		return false;
	slot->frame = frame;
	slot->remaining = run->b->c.slices;
	return true;
}

/* With the lock held: job is finished (or failed with r < 0). */
static void codec_run_finish(struct codec_run *run, unsigned job, int r) {
	unsigned frame = job / run->b->c.slices;
	struct codec_slot *slot = &run->slots[frame % run->b->c.sources];

	if (r < 0 && run->error == 0)
		run->error = r;
	run->done++;
	if (--slot->remaining == 0 && !run->decode)
		run->b->enc_frame[frame % run->b->c.sources] = frame;
	/* A freed slot may let a waiting worker start the next frame. */
	if (slot->remaining == 0 || run->done == run->total || run->error)
		codec_run_wake_all(run);
}

static void *codec_worker_main(void *arg) {
	struct codec_worker *w = arg;
	struct codec_run *run = w->run;
	unsigned job;
	int r;

	pthread_mutex_lock(&run->lock);
	while (!run->error && run->done < run->total) {
		if (codec_queue_pop(&run->queues[w->index], &job)) {
			pthread_mutex_unlock(&run->lock);
			r = codec_run_stage2(run, w, job);
			pthread_mutex_lock(&run->lock);
			codec_run_finish(run, job, r);
			continue;
		}
		if (run->next < run->total && codec_run_claim(run, run->next)) {
			unsigned to = (w->index + 1) % run->threads;
			job = run->next++;
			pthread_mutex_unlock(&run->lock);
			r = codec_run_stage1(run, w, job);
			pthread_mutex_lock(&run->lock);
			if (r < 0) {
				codec_run_finish(run, job, r);
				continue;
			}
			codec_queue_push(&run->queues[to], job);
			pthread_cond_signal(&run->wake[to]);
			continue;
		}
		pthread_cond_wait(&run->wake[w->index], &run->lock);
	}
	codec_run_wake_all(run);
	pthread_mutex_unlock(&run->lock);
	return NULL;
}

static double codec_now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void codec_run_free(struct codec_run *run, struct codec_worker *workers) {
	for (unsigned i = 0; i < run->threads; i++) {
		if (run->wake)
			pthread_cond_destroy(&run->wake[i]);
		if (run->queues)
			free(run->queues[i].jobs);
		if (workers)
			free(workers[i].scratch);
	}
	free(run->wake);
	free(run->queues);
	free(run->slots);
	free(workers);
	pthread_mutex_destroy(&run->lock);
}

static int codec_run_init(struct codec_run *run, struct codec_bench *b, bool decode,
			  struct codec_worker **ret_workers) {
	unsigned n = b->c.threads, in_flight = b->c.sources * b->c.slices;
	struct codec_worker *workers;

	*run = (struct codec_run){ .b = b, .decode = decode, .threads = n, .total = b->c.frames * b->c.slices };
	pthread_mutex_init(&run->lock, NULL);
	run->wake = calloc(n, sizeof(*run->wake));
	run->queues = calloc(n, sizeof(*run->queues));
	run->slots = calloc(b->c.sources, sizeof(*run->slots));
	workers = calloc(n, sizeof(*workers));
	if (!run->wake || !run->queues || !run->slots || !workers) {
		free(run->wake);
		run->wake = NULL;
		codec_run_free(run, workers);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		pthread_cond_init(&run->wake[i], NULL);
	for (unsigned i = 0; i < b->c.sources; i++)
		run->slots[i].frame = UINT_MAX;
	for (unsigned i = 0; i < n; i++) {
		run->queues[i].cap = in_flight;
		run->queues[i].jobs = malloc(in_flight * sizeof(unsigned));
		workers[i] = (struct codec_worker){ .run = run, .index = i, .scratch = malloc(2 * b->row_bytes) };
		if (!run->queues[i].jobs || !workers[i].scratch) {
			codec_run_free(run, workers);
			return -ENOMEM;
		}
	}
	*ret_workers = workers;
	return 0;
}

/* The encode run must leave in each slot the very stream the reference has
 * for the source it last coded there. */
static int codec_bench_check_encoded(const struct codec_bench *b) {
	for (unsigned slot = 0; slot < b->c.sources; slot++) {
		unsigned source = b->enc_frame[slot] % b->c.sources;
		if (b->enc_frame[slot] == UINT_MAX)
			continue;
		for (unsigned s = 0; s < b->c.slices; s++) {
			size_t i = (size_t)slot * b->c.slices + s, k = (size_t)source * b->c.slices + s;
			if (b->enc_size[i] != b->ref_size[k] ||
			    memcmp(b->enc + i * b->slice_cap, b->ref + k * b->slice_cap, b->ref_size[k]) != 0)
				return -EBADMSG;
		}
	}
	return 0;
}

static int codec_bench_run(struct codec_bench *b, bool decode, const cpu_set_t *cpus, double *fps) {
	struct codec_worker *workers = NULL;
	struct codec_run run;
	pthread_attr_t attr;
	unsigned started = 0;
	double t0, t1;
	int r;

	if (!b || !fps)
		return -EINVAL;
	r = codec_run_init(&run, b, decode, &workers);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < b->c.sources; i++)
		b->enc_frame[i] = UINT_MAX;
	pthread_attr_init(&attr);
	if (cpus)
		r = -pthread_attr_setaffinity_np(&attr, sizeof(cpu_set_t), cpus);
	t0 = codec_now();
	for (unsigned i = 0; i < run.threads && r >= 0; i++) {
		r = -pthread_create(&workers[i].thread, &attr, codec_worker_main, &workers[i]);
		if (r == 0)
			started++;
	}
	if (r < 0) {
		/* Those already running must see the failure to stop. */
		pthread_mutex_lock(&run.lock);
		run.error = r;
		codec_run_wake_all(&run);
		pthread_mutex_unlock(&run.lock);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(workers[i].thread, NULL);
	t1 = codec_now();
	pthread_attr_destroy(&attr);
	if (r >= 0)
		r = run.error;
	codec_run_free(&run, workers);
	if (r >= 0 && !decode)
		r = codec_bench_check_encoded(b);
	if (r < 0)
		return r;
	*fps = b->c.frames / (t1 - t0);
	return 0;
}

int codec_bench_encode(struct codec_bench *b, const cpu_set_t *cpus, double *fps) {
	return codec_bench_run(b, false, cpus, fps);
}

int codec_bench_decode(struct codec_bench *b, const cpu_set_t *cpus, double *fps) {
	return codec_bench_run(b, true, cpus, fps);
}
