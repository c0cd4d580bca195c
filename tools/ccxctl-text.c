/* Text for people: escaping for a terminal, aligned tables. */
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ccxctl-text.h"

static _Noreturn void out_of_memory(void) {
	fprintf(stderr, "ccxctl: out of memory\n");
	exit(1);
}

/* How a byte is written: its escape's letter, 'x' for \xHH, or 0 for itself. */
static char escape_of(unsigned char c) {
	switch (c) {
	case '\\': return '\\';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\t': return 't';
	default: return c < 0x20 || c == 0x7f ? 'x' : 0;
	}
}

char *text_escape(const char *s) {
	static const char hex[] = "0123456789abcdef";
	size_t len = 0;
	char *out, *o;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e = escape_of(*p);
		len += e == 'x' ? 4 : e ? 2 : 1;
		if (len > SIZE_MAX - 5)
			out_of_memory();
	}
	out = o = malloc(len + 1);
	if (!out)
		out_of_memory();
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char e = escape_of(*p);
		if (!e) {
			*o++ = (char)*p;
			continue;
		}
		*o++ = '\\';
		*o++ = e;
		if (e == 'x') {
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0xf];
		}
	}
	*o = '\0';
	return out;
}

void text_escape_json(json_object *o) {
	char *escaped;

	switch (json_object_get_type(o)) {
	case json_type_object: {
		json_object_object_foreach(o, key, v) {
			(void)key;
			text_escape_json(v);
		}
		break;
	}
	case json_type_array:
		for (size_t i = 0; i < json_object_array_length(o); i++)
			text_escape_json(json_object_array_get_idx(o, i));
		break;
	case json_type_string:
		escaped = text_escape(json_object_get_string(o));
		if (!json_object_set_string(o, escaped))
			out_of_memory();
		free(escaped);
		break;
	default:
		break;
	}
}

void table_add(struct table *t, ...) {
	va_list ap;
	char **cells = realloc(t->cells, (t->n_rows + 1) * t->n_columns * sizeof(*cells));

	if (!cells)
		out_of_memory();
	t->cells = cells;
	va_start(ap, t);
	for (size_t c = 0; c < t->n_columns; c++) {
		const char *s = va_arg(ap, const char *);
		if (!(t->cells[t->n_rows * t->n_columns + c] = strdup(s ? s : "-")))
			out_of_memory();
	}
	va_end(ap);
	t->n_rows++;
}

void table_print_free(FILE *f, struct table *t) {
	size_t width[TABLE_COLUMNS_MAX] = { 0 };

	for (size_t r = 0; r < t->n_rows; r++)
		for (size_t c = 0; c < t->n_columns; c++) {
			size_t len = strlen(t->cells[r * t->n_columns + c]);
			if (len > width[c])
				width[c] = len;
		}
	for (size_t r = 0; r < t->n_rows; r++) {
		for (size_t c = 0; c < t->n_columns; c++) {
			const char *s = t->cells[r * t->n_columns + c];
			if (c + 1 == t->n_columns)
				fprintf(f, "%s\n", s);
			else
				fprintf(f, "%-*s  ", (int)width[c], s);
			free(t->cells[r * t->n_columns + c]);
		}
	}
	free(t->cells);
}
