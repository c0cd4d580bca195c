#include "waits.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "procfs.h"

int waits_read(const char *root, pid_t pid, struct waits_times *ret) {
	pid_t *tids;
	size_t n, read = 0;
	int r = procfs_list_tasks(root, pid, &tids, &n), error = -ESRCH;

	*ret = (struct waits_times){ 0 };
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct procfs_schedstat ss;
		int fd = procfs_open(root, pid, tids[i], "schedstat");

		if (fd < 0) {
			if (fd != -ESRCH)   /* not just a thread that ended meanwhile */
				error = fd;
			continue;
		}
		if (procfs_pread_schedstat(fd, &ss) >= 0) {
			ret->run_ns += ss.run_ns;
			ret->wait_ns += ss.wait_ns;
			read++;
		}
		close(fd);
	}
	free(tids);
	return read ? 0 : error;
}

double waits_share(const struct waits_times *before, const struct waits_times *now) {
	if (now->run_ns < before->run_ns || now->wait_ns < before->wait_ns)
		return -1;
	uint64_t run = now->run_ns - before->run_ns, wait = now->wait_ns - before->wait_ns;
	return run + wait ? (double)wait / (double)(run + wait) : -1;
}
