/* ccxctl's views of ccxd's replies (tools/ccxctl-print.c), on any reply:
 * the input is a reply's parameters, as JSON. Whatever it holds, each view
 * prints without harm, and what it prints holds no control character but
 * the newlines that end its own lines. */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ccxctl-print.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void print_pinned(FILE *f, json_object *o) {
	print_placed(f, o, "pinned");
}

static void print_an_error(FILE *f, json_object *o) {
	print_error(f, "ccxctl", o, "io.ccxd.Error\033[2J\n");
}

static void print_recommend(FILE *f, json_object *status) {
	json_object *rules = recommend_rules(status);

	print_recommended(f, rules);
	json_object_put(rules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	static void (*const views[])(FILE *, json_object *) = {
		print_status, print_topology, print_rules, print_pinned, print_reloaded, print_version, print_an_error,
		print_learned, print_recommend, print_explained,
	};
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		/* Each view escapes the reply in place: a fresh one each. */
		json_object *reply = json_tokener_parse(text);
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		if (!f)
			abort();
		views[i](f, reply);
		fclose(f);
		json_object_put(reply);
		for (size_t k = 0; k < len; k++)
			if (((unsigned char)out[k] < 0x20 && out[k] != '\n') || out[k] == 0x7f)
				abort();
		free(out);
	}
	free(text);
	return 0;
}
