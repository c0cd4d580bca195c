/* Each figure as a share of the best of its column: what the tables print
 * and the seatings are ranked by. */
#include "probe.h"



#include "probe-internal.h"

double probe_ratio(double v, double best) {
	return best > 0 && v > 0 ? v / best : 0;
}

/* The best of a column: the highest throughput, the lowest latency. */
double probe_best_pipe(const struct probe_results *r) {
	double best = 0;

	for (size_t j = 0; j < r->n_relations; j++)
		if (r->relations[j].pipe_gib_s.median > best)
			best = r->relations[j].pipe_gib_s.median;
	return best;
}

double probe_best_latency(const struct probe_results *r) {
	double best = 0;

	for (size_t j = 0; j < r->n_relations; j++)
		if (r->relations[j].latency_ns.n && (best == 0 || r->relations[j].latency_ns.median < best))
			best = r->relations[j].latency_ns.median;
	return best;
}

static double probe_codec_fps(const struct probe_codec_result *x, bool decode) {
	return x->error ? 0 : decode ? x->decode_fps.median : x->encode_fps.median;
}

double probe_best_codec(const struct probe_results *r, bool decode) {
	double best = 0;

	for (size_t j = 0; j < r->n_codec; j++)
		if (probe_codec_fps(&r->codec[j], decode) > best)
			best = probe_codec_fps(&r->codec[j], decode);
	return best;
}

double probe_pipe_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_relations ? probe_ratio(r->relations[i].pipe_gib_s.median, probe_best_pipe(r)) : 0;
}

double probe_latency_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_relations ? probe_ratio(r->relations[i].latency_ns.median, probe_best_latency(r)) : 0;
}

double probe_encode_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_codec ? probe_ratio(probe_codec_fps(&r->codec[i], false), probe_best_codec(r, false)) : 0;
}

double probe_decode_ratio(const struct probe_results *r, size_t i) {
	return i < r->n_codec ? probe_ratio(probe_codec_fps(&r->codec[i], true), probe_best_codec(r, true)) : 0;
}
