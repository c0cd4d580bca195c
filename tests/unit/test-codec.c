#include <errno.h>
#include <stdint.h>

#include "codec.h"
#include "test.h"

static uint64_t fnv1a(const uint8_t *p, size_t n) {
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

static uint8_t *generate(unsigned w, unsigned h, uint64_t seed, unsigned index) {
	uint8_t *f = malloc(codec_frame_bytes(w, h));

	CHECK(f);
	if (f)
		CHECK_INT(codec_frame_generate(f, w, h, seed, index), 0);
	return f;
}

/* Encodes and decodes; returns the compressed size, 0 on failure. */
static size_t round_trip(unsigned w, unsigned h, unsigned slices, uint64_t seed) {
	size_t size = codec_frame_bytes(w, h), n = 0;
	uint8_t *f = generate(w, h, seed, 3), *out = malloc(size), *stream = NULL;
	unsigned sw = 0, sh = 0, ss = 0;

	if (!f || !out) {
		free(f);
		free(out);
		return 0;
	}
	memset(out, 0xa5, size);
	CHECK_INT(codec_encode(f, w, h, slices, &stream, &n), 0);
	if (stream) {
		CHECK_INT(codec_stream_info(stream, n, &sw, &sh, &ss), 0);
		CHECK_INT(sw, w);
		CHECK_INT(sh, h);
		CHECK_INT(ss, slices);
		CHECK_INT(codec_decode(stream, n, out, size), 0);
		if (memcmp(f, out, size) != 0) {
			printf("# %ux%u, %u slices: decoded frame differs\n", w, h, slices);
			test_failed = 1;
		}
	}
	free(f);
	free(out);
	free(stream);
	return n;
}

static void row_and_frame_sizes_count_every_sample(void) {
	CHECK_INT(codec_row_bytes(1280), 2560);
	CHECK_INT(codec_frame_bytes(1280, 720), 1843200);
	/* an odd pixel keeps its own chroma pair: Y U V */
	CHECK_INT(codec_row_bytes(1), 3);
	CHECK_INT(codec_row_bytes(3), 7);
	CHECK_INT(codec_frame_bytes(17, 9), 9 * 35);
}

static void round_trip_is_lossless_on_many_sizes(void) {
	static const unsigned sizes[][3] = {
		{ 1280, 720, 8 }, { 1280, 720, 1 }, { 1, 1, 1 }, { 2, 1, 1 }, { 3, 2, 2 }, { 5, 5, 5 },
		{ 17, 9, 3 }, { 641, 37, 5 }, { 1279, 719, 7 }, { 33, 100, 100 }, { 4000, 3, 2 },
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		CHECK(round_trip(sizes[i][0], sizes[i][1], sizes[i][2], 7) > 0);
}

static void frames_with_all_values_round_trip(void) {
	/* Extremes and wrap-around: residuals of +-255 must survive modulo 256. */
	static const unsigned w = 63, h = 31;
	size_t size = codec_frame_bytes(w, h), n = 0;
	uint8_t *f = malloc(size), *out = malloc(size), *stream = NULL;
	uint64_t x = 88172645463325252ull;

	for (unsigned pattern = 0; pattern < 4 && f && out; pattern++) {
		for (size_t i = 0; i < size; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			f[i] = pattern == 0 ? 0 : pattern == 1 ? 255 : pattern == 2 ? (uint8_t)x
			       : (uint8_t)((i & 1) ? 255 : 0);
		}
		CHECK_INT(codec_encode(f, w, h, 3, &stream, &n), 0);
		CHECK_INT(codec_decode(stream, n, out, size), 0);
		CHECK(memcmp(f, out, size) == 0);
		free(stream);
		stream = NULL;
	}
	free(f);
	free(out);
}

static void generator_is_deterministic(void) {
	size_t size = codec_frame_bytes(1280, 720);
	uint8_t *a = generate(1280, 720, 1, 0), *b = generate(1280, 720, 1, 0);
	uint8_t *c = generate(1280, 720, 2, 0), *d = generate(1280, 720, 1, 1);

	if (a && b && c && d) {
		CHECK(memcmp(a, b, size) == 0);
		CHECK(memcmp(a, c, size) != 0);
		CHECK(memcmp(a, d, size) != 0);
		/* The same bytes on every machine and compiler: the probe's codec
		 * figures are only comparable between machines if their input is. */
		printf("# checksum %016llx\n", (unsigned long long)fnv1a(a, size));
		CHECK(fnv1a(a, size) == UINT64_C(0x5e61a34a72e3bb41));
	}
	free(a);
	free(b);
	free(c);
	free(d);
}

/* The picture must give both stages real work: neither incompressible noise
 * nor flat colour. */
static void generated_frames_compress_moderately(void) {
	size_t raw = codec_frame_bytes(1280, 720), n = round_trip(1280, 720, 8, 1);
	double ratio = (double)n / (double)raw;

	printf("# compressed to %.3f of raw\n", ratio);
	CHECK(ratio > 0.2);
	CHECK(ratio < 0.7);
}

static void more_slices_cost_a_little(void) {
	size_t one = round_trip(1280, 720, 1, 1), many = round_trip(1280, 720, 16, 1);

	CHECK(one > 0 && many > 0);
	CHECK(many >= one);
	CHECK(many < one + one / 20);
}

static void bad_arguments_are_refused(void) {
	uint8_t f[64] = { 0 }, *stream = NULL;
	size_t n = 0;

	CHECK_INT(codec_frame_generate(f, 0, 4, 1, 0), -EINVAL);
	CHECK_INT(codec_frame_generate(f, 4, CODEC_HEIGHT_MAX + 1, 1, 0), -EINVAL);
	CHECK_INT(codec_frame_generate(NULL, 4, 4, 1, 0), -EINVAL);
	CHECK_INT(codec_encode(f, 4, 4, 0, &stream, &n), -EINVAL);
	CHECK_INT(codec_encode(f, 4, 4, 5, &stream, &n), -EINVAL);
	CHECK_INT(codec_encode(f, 0, 4, 1, &stream, &n), -EINVAL);
	CHECK(stream == NULL);
}

static void damaged_streams_are_errors_not_crashes(void) {
	static const unsigned w = 97, h = 23;
	size_t size = codec_frame_bytes(w, h), n = 0;
	uint8_t *f = generate(w, h, 5, 0), *out = malloc(size), *stream = NULL, *copy;
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned detected = 0;

	if (!f || !out || codec_encode(f, w, h, 4, &stream, &n) < 0) {
		test_failed = 1;
		goto out;
	}
	CHECK_INT(codec_decode(stream, n - 1, out, size), -EBADMSG);
	CHECK_INT(codec_decode(stream, 10, out, size), -EBADMSG);
	CHECK_INT(codec_decode(stream, n, out, size - 1), -ENOSPC);
	copy = malloc(n + 1);
	if (!copy)
		goto out;
	memcpy(copy, stream, n);
	copy[n] = 0;
	CHECK_INT(codec_decode(copy, n + 1, out, size), -EBADMSG);
	memcpy(copy, stream, n);
	copy[0] = 'X';
	CHECK_INT(codec_decode(copy, n, out, size), -EBADMSG);
	memcpy(copy, stream, n);
	copy[16] = 0;             /* no slices */
	CHECK_INT(codec_decode(copy, n, out, size), -EBADMSG);
	memcpy(copy, stream, n);
	copy[20] ^= 0x10;         /* first slice size */
	CHECK_INT(codec_decode(copy, n, out, size), -EBADMSG);
	/* Random damage to the coded data: an error, or a different picture,
	 * never a crash or a read outside the stream (run with SANITIZE=address). */
	for (unsigned i = 0; i < 500; i++) {
		int r;
		memcpy(copy, stream, n);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		copy[36 + x % (n - 36)] ^= (uint8_t)(1u << (x >> 40) % 8);
		r = codec_decode(copy, n, out, size);
		CHECK(r == 0 || r == -EBADMSG);
		if (r < 0 || memcmp(out, f, size) != 0)
			detected++;
	}
	CHECK_INT(detected, 500);
	free(copy);
out:
	free(f);
	free(out);
	free(stream);
}

static void small_bench(unsigned threads, unsigned slices, unsigned sources, unsigned frames) {
	struct codec_bench_config c;
	struct codec_bench *b = NULL;
	double fps = 0;

	codec_bench_config_init(&c);
	c.width = 67;
	c.height = 41;
	c.threads = threads;
	c.slices = slices;
	c.sources = sources;
	c.frames = frames;
	CHECK_INT(codec_bench_new(&c, &b), 0);
	if (!b)
		return;
	CHECK(codec_bench_compression(b) > 0.05 && codec_bench_compression(b) < 1.2);
	CHECK_INT(codec_bench_encode(b, NULL, &fps), 0);
	CHECK(fps > 0);
	fps = 0;
	CHECK_INT(codec_bench_decode(b, NULL, &fps), 0);
	CHECK(fps > 0);
	codec_bench_free(b);
}

static void bench_runs_with_any_thread_count(void) {
	small_bench(1, 1, 1, 3);
	small_bench(2, 5, 2, 7);
	small_bench(3, 4, 3, 20);
	small_bench(4, 8, 4, 2);      /* fewer frames than sources */
	small_bench(7, 41, 2, 9);     /* one row per slice, more workers than CPUs */
}

static void bench_refuses_cpus_it_may_not_use(void) {
	struct codec_bench_config c;
	struct codec_bench *b = NULL;
	cpu_set_t none;
	double fps = -1;

	codec_bench_config_init(&c);
	c.width = 32;
	c.height = 16;
	c.frames = 4;
	CHECK_INT(codec_bench_new(&c, &b), 0);
	if (!b)
		return;
	CPU_ZERO(&none);
	CPU_SET(CPU_SETSIZE - 1, &none);
	CHECK_INT(codec_bench_encode(b, &none, &fps), -EINVAL);
	CHECK_INT(codec_bench_decode(b, &none, &fps), -EINVAL);
	CHECK(fps == -1);
	codec_bench_free(b);
}

static void bench_config_is_checked(void) {
	struct codec_bench_config c;
	struct codec_bench *b = NULL;

	codec_bench_config_init(&c);
	CHECK_INT(c.width, 1280);
	CHECK_INT(c.height, 720);
	CHECK_INT(c.threads, 4);
	c.threads = 0;
	CHECK_INT(codec_bench_new(&c, &b), -EINVAL);
	codec_bench_config_init(&c);
	c.slices = c.height + 1;
	CHECK_INT(codec_bench_new(&c, &b), -EINVAL);
	codec_bench_config_init(&c);
	c.frames = 0;
	CHECK_INT(codec_bench_new(&c, &b), -EINVAL);
	CHECK(b == NULL);
}

TEST_MAIN(T(row_and_frame_sizes_count_every_sample), T(round_trip_is_lossless_on_many_sizes),
	  T(frames_with_all_values_round_trip), T(generator_is_deterministic),
	  T(generated_frames_compress_moderately), T(more_slices_cost_a_little), T(bad_arguments_are_refused),
	  T(damaged_streams_are_errors_not_crashes), T(bench_runs_with_any_thread_count),
	  T(bench_refuses_cpus_it_may_not_use), T(bench_config_is_checked))
