#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_cpu(const char **p, unsigned *ret) {
	const char *s = *p;
	unsigned long v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	while (isdigit((unsigned char)*s)) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= CPU_SETSIZE)
			return -ERANGE;
		s++;
	}
	*p = s;
	*ret = (unsigned)v;
	return 0;
}

int cpulist_parse(const char *s, cpu_set_t *ret) {
	cpu_set_t set;
	const char *end;
	int r;

	CPU_ZERO(&set);
	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		end--;

	while (s < end) {
		unsigned first, last;

		r = parse_cpu(&s, &first);
		if (r < 0)
			return r;
		last = first;
		if (*s == '-') {
			s++;
			r = parse_cpu(&s, &last);
			if (r < 0)
				return r;
			if (last < first)
				return -EINVAL;
		}
		for (unsigned c = first; c <= last; c++)
			CPU_SET(c, &set);
		if (s == end)
			break;
		if (*s != ',' || s + 1 == end)
			return -EINVAL;
		s++;
	}
	*ret = set;
	return 0;
}

/* cpu_set_t is an array of unsigned longs: read a word of 64 CPUs at a
 * time, as a set of 1,024 holds mostly empty ones (status, the ledger and
 * every log line format sets). */
#define WORD_BITS (8 * sizeof(unsigned long))

static unsigned long word(const cpu_set_t *set, unsigned i) {
	unsigned long w;

	memcpy(&w, (const char *)set + i * sizeof(w), sizeof(w));
	return w;
}

/* The first CPU from c on that is in set (in) or not (!in); CPU_SETSIZE
 * where none is. */
static unsigned next_cpu(const cpu_set_t *set, unsigned c, bool in) {
	while (c < CPU_SETSIZE) {
		unsigned long w = in ? word(set, c / WORD_BITS) : ~word(set, c / WORD_BITS);

		w &= ~0UL << (c % WORD_BITS);
		if (w)
			return c - c % WORD_BITS + (unsigned)__builtin_ctzl(w);
		c += WORD_BITS - c % WORD_BITS;
	}
	return CPU_SETSIZE;
}

char *cpulist_format(const cpu_set_t *set, char *buf, size_t size) {
	size_t len = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned c = next_cpu(set, 0, true); c < CPU_SETSIZE;) {
		unsigned end = next_cpu(set, c, false);
		int n;

		if (end == c + 1)
			n = snprintf(buf + len, size - len, "%s%u", len ? "," : "", c);
		else
			n = snprintf(buf + len, size - len, "%s%u-%u", len ? "," : "", c, end - 1);
		if (n < 0 || (size_t)n >= size - len) {
			/* Mark the cut so that nobody mistakes it for the whole set. */
			if (size >= 4)
				strcpy(buf + size - 4, "...");
			return buf;
		}
		len += (size_t)n;
		c = next_cpu(set, end, true);
	}
	return buf;
}

char *cpulist_format_hex(const cpu_set_t *set, char *buf, size_t size) {
	int last = cpulist_last(set);
	size_t len = 0;

	if (size == 0)
		return buf;
	if (last < 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	for (int nibble = last / 4; nibble >= 0 && len + 1 < size; nibble--) {
		unsigned v = 0;
		for (int b = 0; b < 4; b++)
			if (CPU_ISSET((size_t)(nibble * 4 + b), set))
				v |= 1u << b;
		buf[len++] = "0123456789abcdef"[v];
	}
	buf[len] = '\0';
	return buf;
}

int cpulist_last(const cpu_set_t *set) {
	for (unsigned i = CPU_SETSIZE / WORD_BITS; i-- > 0;) {
		unsigned long w = word(set, i);
		if (w)
			return (int)(i * WORD_BITS + WORD_BITS - 1 - (unsigned)__builtin_clzl(w));
	}
	return -1;
}

int cpulist_is_subset(const cpu_set_t *a, const cpu_set_t *b) {
	cpu_set_t both;

	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}
