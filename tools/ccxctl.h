/* What ccxctl.c shares with the commands that live in files of their own
 * (tools/ccxctl-*.c): the global options, the table printer, JSON output. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

struct options {
	const char *socket;
	const char *topology;     /* topology --topology SPEC: read locally, no daemon */
	bool json;
};

#define TABLE_COLUMNS_MAX 10

struct table {
	size_t n_columns, n_rows;
	char **cells;             /* n_rows * n_columns, row 0 is the header */
};

/* Appends a row of n_columns strings (NULL prints as "-"). */
void table_add(struct table *t, ...);
/* Prints with aligned columns and frees the cells. */
void table_print_free(struct table *t);

void print_json(json_object *o);

/* ccxctl probe: parses its own options, so argv[0] is "probe". */
int cmd_probe(const struct options *o, int argc, char **argv);
