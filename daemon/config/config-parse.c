#include "config-parse.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "util.h"

#define USEC_PER_MSEC  UINT64_C(1000)
#define USEC_PER_SEC   UINT64_C(1000000)
#define USEC_PER_MIN   (60 * USEC_PER_SEC)
#define USEC_PER_HOUR  (60 * USEC_PER_MIN)

/* Reads one or more digits. Overflow is remembered rather than returned at
 * once, so that "99999999999999999999x" is reported as malformed (-EINVAL)
 * and only a well-formed number that is too big as -ERANGE. */
static int parse_digits(const char **p, uint64_t *ret, bool *overflow) {
	const char *s = *p;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
			*overflow = true;
	}
	*p = s;
	*ret = v;
	return 0;
}

int config_parse_duration(const char *s, uint64_t *usec) {
	static const struct {
		const char *suffix;
		uint64_t usec;
	} units[] = {
		{ "", USEC_PER_SEC },
		{ "us", 1 },
		{ "ms", USEC_PER_MSEC },
		{ "s", USEC_PER_SEC },
		{ "m", USEC_PER_MIN },
		{ "h", USEC_PER_HOUR },
	};
	uint64_t whole, frac = 0, frac_div = 1, mult = 0, v;
	bool overflow = false, found = false;

	if (parse_digits(&s, &whole, &overflow) < 0)
		return -EINVAL;
	if (*s == '.') {
		s++;
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		/* Nine digits are finer than any unit's microseconds; the rest
		 * is checked but cannot change the result. */
		for (; isdigit((unsigned char)*s); s++) {
			if (frac_div < UINT64_C(1000000000)) {
				frac = frac * 10 + (uint64_t)(*s - '0');
				frac_div *= 10;
			}
		}
	}
	for (size_t i = 0; i < ELEMENTSOF(units); i++)
		if (strcmp(s, units[i].suffix) == 0) {
			mult = units[i].usec;
			found = true;
			break;
		}
	if (!found)
		return -EINVAL;
	/* frac < 10^9 and mult <= 3.6 * 10^9: the product fits in 64 bits. */
	if (overflow || __builtin_mul_overflow(whole, mult, &v) ||
	    __builtin_add_overflow(v, frac * mult / frac_div, &v))
		return -ERANGE;
	*usec = v;
	return 0;
}

int config_parse_size(const char *s, uint64_t *bytes) {
	static const char prefixes[] = "KMGTPE";
	uint64_t v;
	unsigned shift = 0;
	bool overflow = false;
	const char *p;

	if (parse_digits(&s, &v, &overflow) < 0)
		return -EINVAL;
	if (*s && (p = strchr(prefixes, *s))) {
		shift = 10 * (unsigned)(p - prefixes + 1);
		s++;
		if (*s == 'i' && s[1] == 'B')
			s += 2;
		else if (*s == 'B')
			s++;
	} else if (*s == 'B')
		s++;
	if (strcmp(s, "/s") == 0)
		s += 2;
	if (*s)
		return -EINVAL;
	if (overflow || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	*bytes = v << shift;
	return 0;
}

int config_parse_bool(const char *s, bool *b) {
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	if (INDEX_OF(yes, s) >= 0)
		*b = true;
	else if (INDEX_OF(no, s) >= 0)
		*b = false;
	else
		return -EINVAL;
	return 0;
}

int config_parse_ccx_index(const char *s, size_t len, unsigned *index) {
	unsigned v = 0;

	if (len == 0)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -EINVAL;
		/* Once past the limit it stops growing, so that it cannot overflow. */
		if (v < CONFIG_PARSE_CCX_MAX)
			v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v >= CONFIG_PARSE_CCX_MAX)
		return -ERANGE;
	*index = v;
	return 0;
}
