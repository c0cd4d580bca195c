#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
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

char *cpulist_format(const cpu_set_t *set, char *buf, size_t size) {
	size_t len = 0;
	int first = 1;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned c = 0; c < CPU_SETSIZE; c++) {
		unsigned last = c;
		int n;

		if (!CPU_ISSET(c, set))
			continue;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
			last++;
		if (last == c)
			n = snprintf(buf + len, size - len, "%s%u", first ? "" : ",", c);
		else
			n = snprintf(buf + len, size - len, "%s%u-%u", first ? "" : ",", c, last);
		if (n < 0 || (size_t)n >= size - len) {
			/* Mark the cut so that nobody mistakes it for the whole set. */
			if (size >= 4)
				strcpy(buf + size - 4, "...");
			return buf;
		}
		len += (size_t)n;
		first = 0;
		c = last;
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
	for (int c = CPU_SETSIZE - 1; c >= 0; c--)
		if (CPU_ISSET((size_t)c, set))
			return c;
	return -1;
}

int cpulist_is_subset(const cpu_set_t *a, const cpu_set_t *b) {
	cpu_set_t both;

	CPU_AND(&both, a, b);
	return CPU_EQUAL(&both, a);
}
