/* The ledger of original affinities in the runtime directory: whatever the
 * file holds, parsing gives entries that format back to a ledger that parses
 * to the same entries, or an error that says why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	struct ledger_entry *e, *again;
	size_t n, n_again;
	char *text, *error, *in = malloc(size + 1);

	if (!in)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	/* Applied over nothing, a log of anything: entries whose cpus parsed. */
	e = NULL;
	n = 0;
	if (ledger_apply_log(in, &e, &n) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		if (e[i].pid <= 0 || CPU_COUNT(&e[i].original) == 0 || CPU_COUNT(&e[i].cpus) == 0)
			abort();
	free(e);
	if (ledger_parse(in, &e, &n, &error) < 0) {
		if (!error)
			abort();   /* every refusal says why */
		free(error);
		free(in);
		return 0;
	}
	if (ledger_format(e, n, &text) < 0 || ledger_parse(text, &again, &n_again, &error) < 0 || n_again != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (again[i].pid != e[i].pid || again[i].start_time != e[i].start_time || again[i].owner != e[i].owner ||
		    strcmp(again[i].comm, e[i].comm) != 0 || strcmp(again[i].rule, e[i].rule) != 0 ||
		    !CPU_EQUAL(&again[i].original, &e[i].original) || !CPU_EQUAL(&again[i].cpus, &e[i].cpus))
			abort();
	free(again);
	free(text);
	free(e);
	free(in);
	return 0;
}
