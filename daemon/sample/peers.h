/* Which sockets of the active processes are connected to each other, and
 * how many bytes loopback TCP carries, through socket diagnostics
 * (sockdiag.h): Unix sockets from a dump of them all, loopback TCP from a
 * dump of those connections and then lookups of each, with their byte
 * counters from one sample to the next. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "channels.h"
#include "sample.h"

struct peers;

/* Without socket diagnostics (it logs why) no socket is sampled: -ENOMEM
 * only. */
int peers_new(struct peers **ret);
void peers_free(struct peers *p);

/* The Unix and loopback TCP channels between the processes of merged eps
 * (channels_merge_endpoints()), of sample number cycle, into res. */
int peers_channels(struct peers *p, uint64_t cycle, const struct endpoint *eps, size_t n, struct sampler_result *res,
		   size_t *allocated);
