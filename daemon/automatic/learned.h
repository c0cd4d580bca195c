/* What won, per set of programs: the seating each set of programs kept
 * last, tried first when those programs are grouped again, and kept across
 * restarts in a JSON file (state_dir/placements.json):
 *   {"version": 1, "seatings": {"/usr/bin/pv|/usr/bin/yes": "shared-cpu"}} */
#pragma once

#include <stdbool.h>

#include "placer.h"

/* Sets of programs remembered: the least recently kept goes first. Any
 * user's programs may form groups, so the file must not grow with them.
 * The file is mode 0600: it names other users' programs. */
#define LEARNED_MAX 512

struct learned;
struct group;
struct sampler_result;

/* path NULL: remembered until exit only. A file that is not what ccxd
 * writes is ignored, with a warning; a missing one is no error. */
int learned_new(const char *path, struct learned **ret);
void learned_free(struct learned *l);

/* The key what won for grp is kept under: "a|b", its members' sorted
 * executables, read under root, with the name s gives a process for one
 * that cannot be read. To be freed; NULL without memory. */
char *learned_programs(const char *root, const struct group *grp, const struct sampler_result *s);

/* What won for programs ("a|b": the sorted executables), or _SEATING_MAX. */
enum seating learned_seating(const struct learned *l, const char *programs);
/* Remembers it, and writes the file (a failure is logged). */
void learned_keep(struct learned *l, const char *programs, enum seating seating);
/* Forgets programs, and writes the file: the next group of them tries the
 * seatings in the configured order. -ENOENT when it was not remembered,
 * or what writing the file failed with (forgotten all the same). */
int learned_forget(struct learned *l, const char *programs);

/* What is remembered, the least recently kept first: entry i < count. */
size_t learned_count(const struct learned *l);
const char *learned_entry(const struct learned *l, size_t i, enum seating *seating);
