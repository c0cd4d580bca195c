/* Parsers for the notations of config values, shared with anything else that
 * reads them. Each returns 0 or -EINVAL (-ERANGE on overflow) and leaves its
 * result untouched on error. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Matches CPU_SETSIZE: no machine ccxd can pin on has more CCXs than CPUs. */
#define CONFIG_PARSE_CCX_MAX 1024

/* "500ms", "1s", "2m", "1.5s"; a bare number is seconds. */
int config_parse_duration(const char *s, uint64_t *usec);

/* Sizes and rates: "64K", "1M", "2G" (powers of 1024; an optional trailing
 * "B" or "iB" and, for rates, "/s"); a bare number is bytes. */
int config_parse_size(const char *s, uint64_t *bytes);

/* yes/no, true/false, on/off, 1/0. */
int config_parse_bool(const char *s, bool *b);

/* One item of a ccx list, the len bytes at s: digits only, the index below
 * CONFIG_PARSE_CCX_MAX (-ERANGE otherwise). */
int config_parse_ccx_index(const char *s, size_t len, unsigned *index);
