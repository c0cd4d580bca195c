/* What ccxctl.c shares with the commands that live in files of their own
 * (tools/ccxctl-*.c): the global options, JSON output; and through
 * ccxctl-text.h, escaping and tables. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "ccxctl-text.h"

struct options {
	const char *socket;
	const char *topology;     /* topology --topology SPEC: read locally, no daemon */
	bool json;
	unsigned watch_ms;        /* status --watch: every so many ms; 0: once */
};

/* Exit statuses (ccxctl(1)); 1 for the rest of what fails. */
#define EXIT_USAGE 2
#define EXIT_NOT_RUNNING 3        /* nothing listens: as LSB's "program is not running" */

void print_json(json_object *o);

/* Calls method of ccxd (params: taken, may be NULL). NULL when there is no
 * answer or the answer is an error, which is printed unless quiet;
 * ctl_failed() is then the exit status to give. */
json_object *ctl_call(const struct options *o, const char *method, json_object *params, bool quiet);
int ctl_failed(void);
/* The topology's JSON: --topology's, read here, or ccxd's. */
json_object *ctl_topology(const struct options *o);

/* ccxctl run: parses its own options, so argv[0] is "run". */
int cmd_run(const struct options *o, int argc, char **argv);

/* ccxctl probe: parses its own options, so argv[0] is "probe". */
int cmd_probe(const struct options *o, int argc, char **argv);
