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
};

/* Exit statuses (ccxctl(1)); 1 for the rest of what fails. */
#define EXIT_USAGE 2
#define EXIT_NOT_RUNNING 3        /* nothing listens: as LSB's "program is not running" */

void print_json(json_object *o);

/* ccxctl probe: parses its own options, so argv[0] is "probe". */
int cmd_probe(const struct options *o, int argc, char **argv);
