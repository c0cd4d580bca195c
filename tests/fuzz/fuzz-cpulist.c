/* CPU lists as the kernel and the config write them ("0-3,8-11"): whatever
 * parses must format back to a list that parses to the same set. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	char in[CPULIST_MAX + 1], out[CPULIST_MAX], hex[CPU_SETSIZE / 4 + 1];
	cpu_set_t set, again;

	if (size > CPULIST_MAX)
		return 0;
	memcpy(in, data, size);
	in[size] = '\0';
	if (cpulist_parse(in, &set) < 0)
		return 0;
	cpulist_format(&set, out, sizeof(out));
	if (cpulist_parse(out, &again) < 0 || !CPU_EQUAL(&set, &again))
		abort();
	cpulist_format_hex(&set, hex, sizeof(hex));
	if (cpulist_last(&set) >= CPU_SETSIZE || !cpulist_is_subset(&set, &again))
		abort();
	return 0;
}
