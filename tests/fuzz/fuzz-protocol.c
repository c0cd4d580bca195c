/* The control protocol's request decoding, as control.c runs it on each
 * NUL-terminated message: the input is the byte stream of one connection,
 * split at NULs. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	const char *text = (const char *)data;
	size_t start = 0;

	if (size > 2 * CCXD_REQUEST_MAX)
		return 0;
	while (start < size) {
		const char *nul = memchr(text + start, '\0', size - start);
		/* The last piece, unterminated, is what the server would still be
		 * waiting for; decode it all the same, as a message. */
		size_t len = nul ? (size_t)(nul - (text + start)) : size - start;
		struct protocol_call call;
		int r = protocol_parse_call(text + start, len, &call);

		if (r == 0) {
			if (!call.message || !call.method)
				abort();
			/* What a handler would do with it: read the parameters, echo them. */
			if (call.parameters && !json_object_is_type(call.parameters, json_type_object))
				abort();
			if (call.parameters)
				(void)json_object_to_json_string_ext(call.parameters, JSON_C_TO_STRING_PLAIN);
			protocol_call_done(&call);
		} else if (r != -EBADMSG && r != -EINVAL) {
			abort();
		}
		start += len + 1;
	}
	return 0;
}
