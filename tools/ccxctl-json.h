/* Reading ccxctl's replies: a member by key, a string, a number, an array's
 * length, each NULL, false or 0 where the JSON has none of that type. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

static inline json_object *jget(json_object *o, const char *key) {
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static inline const char *jstr(json_object *o, const char *key) {
	json_object *v = jget(o, key);

	return v && !json_object_is_type(v, json_type_null) ? json_object_get_string(v) : NULL;
}

static inline bool jnum(json_object *o, const char *key, double *ret) {
	json_object *v = jget(o, key);

	if (!v || !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		return false;
	*ret = json_object_get_double(v);
	return true;
}

static inline size_t jlen(json_object *a) {
	return a && json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

/* A string member to print: "-" where there is none. */
static inline const char *jshow(json_object *o, const char *key) {
	const char *s = jstr(o, key);

	return s ? s : "-";
}
