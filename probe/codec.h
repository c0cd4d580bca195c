/* A lossless video codec written for the probe: packed YUY2 frames, the
 * median (LOCO-I) predictor per plane, adaptive Golomb-Rice coding with a few
 * contexts, frames cut into slices that decode independently. It exists so
 * that ccxd can measure, on the machine at hand, what a real multi-threaded
 * media workload gains or loses under each CPU mask (the codec table of
 * docs/reference-figures.md); it is not meant to be a good codec.
 *
 * YUY2: each pair of pixels is Y0 U Y1 V. For an odd width the last pixel of a
 * row is Y U V (its own chroma pair), so a row is always
 * codec_row_bytes(width) bytes and every plane keeps every sample. */
#pragma once

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

#define CODEC_WIDTH_MAX  16384
#define CODEC_HEIGHT_MAX 16384

/* Bytes of one packed row and of one packed frame. */
size_t codec_row_bytes(unsigned width);
size_t codec_frame_bytes(unsigned width, unsigned height);

/* Fills frame (codec_frame_bytes(width, height) bytes) with picture number
 * index of the test sequence seed: gradients, moving shapes with sharp edges,
 * a striped texture and noise, so that prediction and entropy coding both do
 * real work. The same (width, height, seed, index) gives the same bytes on
 * every machine: integer arithmetic and a fixed PRNG only. */
int codec_frame_generate(uint8_t *frame, unsigned width, unsigned height, uint64_t seed, unsigned index);

/* Single-threaded encode of one frame into a self-describing stream
 * ("CCXV" header, slice sizes, slices). *out is malloc'd. slices: how many
 * independent horizontal bands (1..height; more slices, more parallelism,
 * slightly worse compression). Returns 0 or -EINVAL, -ENOMEM. */
int codec_encode(const uint8_t *frame, unsigned width, unsigned height, unsigned slices, uint8_t **out,
		 size_t *out_size);

/* Reads the dimensions from a stream's header. Returns 0 or -EBADMSG. */
int codec_stream_info(const uint8_t *in, size_t size, unsigned *width, unsigned *height, unsigned *slices);

/* Decodes a stream from codec_encode into frame, which holds frame_size bytes
 * (codec_frame_bytes of the stream's dimensions). Returns 0, -EBADMSG for a
 * damaged or truncated stream, -ENOSPC when frame_size is wrong. Never reads
 * outside in. */
int codec_decode(const uint8_t *in, size_t size, uint8_t *frame, size_t frame_size);

/* The multi-threaded benchmark. Workers hand slices to each other through
 * queues: the worker that runs the first stage of a slice (encode: unpack and
 * predict; decode: entropy-decode) passes the second stage (encode:
 * entropy-code; decode: reconstruct, repack and compare) to the next worker,
 * so every slice's intermediate data crosses from one thread to another and
 * the CPU mask decides whether that happens inside one cache or across them. */
struct codec_bench_config {
	unsigned width, height;   /* 1280 x 720 */
	unsigned threads;         /* workers, 4 */
	unsigned slices;          /* per frame, 8 */
	unsigned sources;         /* distinct frames, cycled; also the frames in flight; 4 */
	unsigned frames;          /* frames per timed run */
	uint64_t seed;
};

void codec_bench_config_init(struct codec_bench_config *c);

struct codec_bench;

/* Generates the source frames and their reference encoding (single-threaded,
 * not timed). Returns 0, -EINVAL for a bad config, -ENOMEM. */
int codec_bench_new(const struct codec_bench_config *c, struct codec_bench **ret);
void codec_bench_free(struct codec_bench *b);

/* compressed size over raw size of the sources */
double codec_bench_compression(const struct codec_bench *b);

/* One timed run of c->frames frames with every worker restricted to cpus
 * (NULL: the caller's own affinity). Encode checks that each source's
 * stream is identical to the single-threaded reference; decode checks every
 * decoded frame against its source, byte for byte. Returns 0 with *fps set,
 * -EBADMSG on any mismatch, -EINVAL when cpus names no CPU this process may
 * use, other -errno. */
int codec_bench_encode(struct codec_bench *b, const cpu_set_t *cpus, double *fps);
int codec_bench_decode(struct codec_bench *b, const cpu_set_t *cpus, double *fps);
