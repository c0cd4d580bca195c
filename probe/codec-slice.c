/* One slice of a frame, in the codec's two stages each way: prediction
 * (median of left, above and their gradient) and adaptive Golomb-Rice
 * coding of the residuals. */
#include "codec.h"

#include <errno.h>
#include <string.h>

#include "codec-internal.h"

/* Golomb-Rice: a quotient of CODEC_ESCAPE or more is sent as CODEC_ESCAPE
 * zeros, a one and the raw 8-bit value, so that no code is longer than 25
 * bits however badly the adaptation guessed. */
#define CODEC_ESCAPE         16
#define CODEC_BITS_MAX       (CODEC_ESCAPE + 1 + 8)
#define CODEC_K_MAX          7      /* values are < 256: a larger k only adds bits */

#define CODEC_CONTEXTS       8

/* ---- packing -------------------------------------------------------------- */

void codec_pack_row(const uint8_t *y, const uint8_t *u, const uint8_t *v, unsigned width, uint8_t *out) {
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

void codec_unpack_row(const uint8_t *in, unsigned width, uint8_t *y, uint8_t *u, uint8_t *v) {
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

void codec_slice_predict(const uint8_t *packed, unsigned width, unsigned rows, uint8_t *res,
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

void codec_slice_reconstruct(const uint8_t *res, unsigned width, unsigned rows, uint8_t *packed,
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

size_t codec_coded_max(size_t n) {
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

int codec_slice_code(const uint8_t *res, unsigned width, unsigned rows, uint8_t *out, size_t cap,
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
int codec_slice_decode(const uint8_t *in, size_t size, unsigned width, unsigned rows, uint8_t *res) {
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
