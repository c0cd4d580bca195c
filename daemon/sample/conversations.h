/* Conversations: the channels between processes that the kernel's traffic
 * counters (traffic.h) show, whatever pipes or sockets they went through.
 * A queue's writers and readers are paired, and what each pair moved is
 * summed over all its queues of a kind: every connection of a client to a
 * server, however short-lived, one pipe or several. Only what moved counts:
 * a pipe or socket nobody used, a listening socket or a process holding
 * both ends of a pipe it only writes make no channel. A pure function of
 * the counts, so that it can be tested with struct literals. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sample.h"
#include "traffic.h"

/* Replaces res's pipe channels (when pipes) and Unix and TCP ones (when
 * sockets), found in /proc, with the exact ones between res's processes
 * from e (n, sorted as traffic_read() gives them), counted over window_s;
 * and sets each process's counted_read_bps and counted_write_bps. One
 * channel per pair of processes and kind: from is the end that sent more,
 * bytes_per_s and messages_per_s are both directions', and both says that
 * both directions carried something. -ENOMEM, or 0. */
int conversations_add(struct sampler_result *res, size_t *allocated, const struct traffic_entry *e, size_t n,
		      double window_s, bool pipes, bool sockets);
