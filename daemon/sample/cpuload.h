/* How busy each CPU was between two readings of /proc/stat: the load that
 * others put there, which placement must count. */
#pragma once

#include <stddef.h>

struct cpuload;

int cpuload_new(const char *root, struct cpuload **ret);
void cpuload_free(struct cpuload *c);

/* Reads /proc/stat again: the share of the time since the previous reading
 * that each CPU was busy, 0..1, by CPU number, into a new *load of *n; none
 * (*n 0) at the first reading, or when /proc/stat cannot be read. */
void cpuload_sample(struct cpuload *c, double **load, size_t *n);
