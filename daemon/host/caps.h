/* CAP_BPF and CAP_PERFMON are needed to load BPF programs, not to use them:
 * once ccxd has loaded its own (the sampler's iterators and counters, the
 * exec programs) at start-up, it gives them up, where the kernel lets it
 * use what is loaded without them. */
#pragma once

#include <stdbool.h>

enum caps_bpf {
	CAPS_BPF_NONE,     /* never held (a sandbox without them, or no BPF) */
	CAPS_BPF_DROPPED,  /* held at start, gone from all but the bounding set after the loads */
	CAPS_BPF_KEPT,     /* held, and kept: the kernel wants them for every bpf() */
};

/* Drops CAP_BPF and CAP_PERFMON from the effective, permitted, inheritable
 * and ambient sets: at once when nothing is loaded (loaded false), else
 * once a bpf() call is shown to pass without them; keeps them otherwise
 * (Linux before 6.5 with kernel.unprivileged_bpf_disabled set checks
 * CAP_BPF in every bpf() call). Returns what it did, each outcome logged. */
enum caps_bpf caps_drop_bpf(bool loaded);

const char *caps_bpf_to_string(enum caps_bpf c);
