/* Text for people: escaping for a terminal, aligned tables. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ccxctl-text.h"

static _Noreturn void out_of_memory(void) {
	fprintf(stderr, "ccxctl: out of memory\n");
	exit(1);
}

/* How an ASCII byte is written: its escape's letter, 'x' for \xHH, or 0
 * for itself. */
static char escape_of(unsigned char c) {
	switch (c) {
	case '\\': return '\\';
	case '\n': return 'n';
	case '\r': return 'r';
	case '\t': return 't';
	default: return c < 0x20 || c == 0x7f ? 'x' : 0;
	}
}

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), with its code point; 0 when
 * p does not start one. */
static size_t utf8_sequence(const unsigned char *p, uint32_t *cp) {
	size_t n;
	uint32_t c, min;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)   /* the NUL at the end too */
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Characters that a terminal acts on or that reorder what follows: the C1
 * controls (U+0080-U+009F; some terminals take U+009B as ESC [) and the
 * bidirectional marks, embeddings, overrides and isolates, with which a
 * name could show as another. */
static bool unprintable(uint32_t cp) {
	return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

char *text_escape(const char *s) {
	static const char hex[] = "0123456789abcdef";
	size_t len = strlen(s);
	char *out, *o;

	/* At most four bytes out for each byte in: \xHH for one byte, \uHHHH
	 * (six) for two or three. */
	if (len > (SIZE_MAX - 1) / 4)
		out_of_memory();
	out = o = malloc(4 * len + 1);
	if (!out)
		out_of_memory();
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		uint32_t cp;
		size_t n;
		char e;

		if (*p < 0x80) {
			e = escape_of(*p);
			if (!e) {
				*o++ = (char)*p++;
				continue;
			}
			*o++ = '\\';
			*o++ = e;
			if (e == 'x') {
				*o++ = hex[*p >> 4];
				*o++ = hex[*p & 0xf];
			}
			p++;
			continue;
		}
		n = utf8_sequence(p, &cp);
		if (n == 0) {   /* not UTF-8: the byte, written out */
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0xf];
			p++;
		} else if (unprintable(cp)) {
			o += sprintf(o, "\\u%04x", (unsigned)cp);
			p += n;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
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
