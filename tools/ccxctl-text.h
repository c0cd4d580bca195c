/* Text for people from what others wrote: the strings of ccxd's replies,
 * which hold what processes and users named, escaped for a terminal; and
 * the tables they are printed in. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>

/* s with every control character written out as C writes it: \n, \r, \t,
 * \\ for a backslash, \xHH for every other byte below 0x20, for 0x7f (ESC
 * is \x1b) and for every byte that is not part of well-formed UTF-8 (raw
 * 0x80-0x9f among them); the C1 controls (U+0080-U+009F) and the
 * bidirectional marks, embeddings, overrides and isolates as \uHHHH; other
 * UTF-8 as it is. Nothing is cut. Returns a new string. Like everything
 * here, exits when out of memory. */
char *text_escape(const char *s);

/* Every string in o, at any depth, replaced by text_escape() of it: a reply
 * made fit to print for people, done once before any of it is printed. */
void text_escape_json(json_object *o);

#define TABLE_COLUMNS_MAX 10

struct table {
	size_t n_columns, n_rows;
	char **cells;             /* n_rows * n_columns, row 0 is the header */
};

/* Appends a row of n_columns strings (NULL prints as "-"). */
void table_add(struct table *t, ...);
/* Prints to f with aligned columns and frees the cells. */
void table_print_free(FILE *f, struct table *t);
