/* The /proc parsers: the first byte picks which file the rest is the text
 * of, so one corpus covers stat, io, cgroup, fd link targets, /proc/stat,
 * schedstat and the context switches in status. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "procfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	char *buf;

	if (size < 1 || size > 65536)
		return 0;
	/* The readers hand the parsers NUL-terminated text of any bytes. */
	buf = malloc(size);
	if (!buf)
		abort();
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';

	switch (data[0] % 7) {
	case 0: {
		struct procfs_stat st;
		if (procfs_parse_stat(buf, 42, &st) == 0 &&
		    (st.pid != 42 || strnlen(st.comm, sizeof(st.comm)) >= sizeof(st.comm)))
			abort();
		break;
	}
	case 1: {
		struct procfs_io io;
		(void)procfs_parse_io(buf, &io);
		break;
	}
	case 2: {
		const char *path;
		bool v1;
		if (cgroup_parse(buf, &path, &v1) == 0 &&
		    (path < buf || path > buf + size - 1 || strstr(path, "..")))
			abort();
		break;
	}
	case 3: {
		uint64_t inode;
		(void)procfs_parse_fd_target(buf, &inode);
		break;
	}
	case 4: {
		struct procfs_cpu_time t[8];
		int n = procfs_parse_cpu_times(buf, t, 8);
		if (n > 8)
			abort();
		for (int i = 0; i < n; i++)
			if (t[i].cpu >= CPU_SETSIZE)
				abort();
		break;
	}
	case 5: {
		struct procfs_schedstat ss;
		(void)procfs_parse_schedstat(buf, &ss);
		break;
	}
	case 6: {
		struct procfs_switches sw;
		(void)procfs_parse_switches(buf, &sw);
		break;
	}
	}
	free(buf);
	return 0;
}
