/* Communicating groups: the connected components of the channel graph,
 * counting only channels that carry at least min_rate. A pure function of a
 * sample, so that it can be tested with struct literals. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "sampler.h"

/* Below this a channel is chatter, not a stream worth a placement: 1 MiB/s is
 * about what a pipe carries in 0.03 % of one core's time, far below what
 * moving two processes costs in cache refills. */
#define GROUPS_DEFAULT_MIN_RATE (1024.0 * 1024.0)

struct group {
	pid_t id;                  /* its lowest pid: stable while its members are */
	pid_t *pids;               /* sorted */
	size_t n_pids;
	size_t *channels;          /* indexes into the sample's channels */
	size_t n_channels;
	double bytes_per_s;        /* over those channels */
	double cpu;                /* CPUs' worth of time its members used */
};

/* Groups of two processes or more, largest traffic first. */
int groups_build(const struct sampler_result *sample, double min_rate, struct group **ret, size_t *n);
void groups_free(struct group *groups, size_t n);
