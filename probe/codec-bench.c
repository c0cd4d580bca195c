/* The multi-threaded benchmark: frames in flight through a pipeline of
 * workers, each slice's two stages on neighbouring workers, so that the
 * placement of the workers shows in the frames a second. */
#include "codec.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec-internal.h"

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
