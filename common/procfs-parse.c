/* The pure parsers of /proc's texts (procfs.h): what procfs.c's readers
 * read, as the kernel writes it, into structs. No system call: the unit
 * tests and the fuzzers feed them any text. */
#include "procfs.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Field 39 of proc(5), given the text after field 22. Every kernel ccxd
 * runs on has it, but the fields the earlier parsing needs do not depend on
 * it: a line that stops short, or garbles a field in between, has no
 * processor rather than no parse. */
static int parse_processor(const char *p) {
	for (int i = 23; i <= 39; i++) {
		long long v;
		char *end;

		if (*p != ' ')
			return -1;
		p++;
		errno = 0;
		v = *p == '-' ? strtoll(p, &end, 10) : (long long)strtoull(p, &end, 10);
		if (end == p || errno)
			return -1;
		if (i == 39)
			return v >= 0 && v < CPU_SETSIZE ? (int)v : -1;
		p = end;
	}
	return -1;
}

int procfs_parse_stat(const char *buf, pid_t pid, struct procfs_stat *ret) {
	const char *open_paren, *close_paren, *p;
	unsigned long long field[22];
	size_t comm_len;
	int i;

	/* comm may hold spaces and parentheses: it ends at the last ')'. */
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return -EINVAL;
	comm_len = (size_t)(close_paren - open_paren - 1);
	if (comm_len >= PROCFS_COMM_MAX)
		comm_len = PROCFS_COMM_MAX - 1;

	memset(ret, 0, sizeof(*ret));
	ret->pid = pid;
	memcpy(ret->comm, open_paren + 1, comm_len);
	ret->comm[comm_len] = '\0';
	p = close_paren + 2;
	if (!*p)
		return -EINVAL;
	ret->state = *p++;

	/* fields 4..22 of proc(5): ppid ... starttime */
	for (i = 4; i <= 22; i++) {
		char *end;

		if (*p != ' ')
			return -EINVAL;
		p++;
		errno = 0;
		if (*p == '-')  /* tty_nr and friends may be negative; we never use them */
			field[i - 1] = (unsigned long long)strtoll(p, &end, 10);
		else
			field[i - 1] = strtoull(p, &end, 10);
		if (end == p || errno)
			return -EINVAL;
		p = end;
	}
	ret->ppid = (pid_t)field[3];
	ret->flags = (unsigned long)field[8];
	ret->utime = field[13];
	ret->stime = field[14];
	ret->threads = (unsigned long)field[19];
	ret->start_time = field[21];
	ret->processor = parse_processor(p);
	return 0;
}

int procfs_parse_schedstat(const char *buf, struct procfs_schedstat *ret) {
	unsigned long long run, wait, runs = 0;
	int end = 0, runs_end = 0;

	if (sscanf(buf, "%llu %llu%n", &run, &wait, &end) != 2 || (buf[end] != ' ' && buf[end] != '\n'))
		return -EINVAL;
	if (buf[end] == ' ' && (sscanf(buf + end, " %llu%n", &runs, &runs_end) != 1 ||
				(buf[end + runs_end] != ' ' && buf[end + runs_end] != '\n')))
		return -EINVAL;
	ret->run_ns = run;
	ret->wait_ns = wait;
	ret->runs = runs;
	return 0;
}

/* The value of "NAME:\t123" at the start of a line of buf. */
static int status_field(const char *buf, const char *name, uint64_t *ret) {
	size_t len = strlen(name);

	for (const char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		unsigned long long v;
		char *end;
		if (strncmp(line, name, len) != 0 || line[len] != ':')
			continue;
		errno = 0;
		v = strtoull(line + len + 1, &end, 10);
		if (errno || end == line + len + 1 || (*end != '\n' && *end != '\0'))
			return -EINVAL;
		*ret = v;
		return 0;
	}
	return -EINVAL;
}

int procfs_parse_switches(const char *buf, struct procfs_switches *ret) {
	int r = status_field(buf, "voluntary_ctxt_switches", &ret->voluntary);

	return r < 0 ? r : status_field(buf, "nonvoluntary_ctxt_switches", &ret->involuntary);
}

/* "cpuN user nice system idle iowait irq softirq steal ..." in one line
 * that ends in a newline. Kernels before 2.6.11 lack some of the later
 * fields: the first four are all a line needs. */
static int parse_cpu_line(const char *line, const char *eol, struct procfs_cpu_time *ret) {
	unsigned long long v[8] = { 0 };
	const char *p = line + 3;
	char *end;
	unsigned long cpu;
	int n = 0;

	errno = 0;
	cpu = strtoul(p, &end, 10);
	if (errno || cpu >= CPU_SETSIZE)
		return -EINVAL;
	for (p = end; n < 8; n++) {
		while (*p == ' ')
			p++;
		if (p >= eol)
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		v[n] = strtoull(p, &end, 10);
		if (errno)
			return -EINVAL;
		p = end;
	}
	if (n < 4)
		return -EINVAL;
	ret->cpu = (unsigned)cpu;
	ret->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
	ret->total = ret->busy + v[3] + v[4];
	return 0;
}

int procfs_parse_cpu_times(const char *buf, struct procfs_cpu_time *ret, size_t max) {
	size_t n = 0;

	for (const char *line = buf; *line && n < max;) {
		const char *eol = strchr(line, '\n');
		if (!eol)
			break;   /* cut short */
		if (strncmp(line, "cpu", 3) == 0 && isdigit((unsigned char)line[3])) {
			int r = parse_cpu_line(line, eol, &ret[n]);
			if (r < 0)
				return r;
			n++;
		}
		line = eol + 1;
	}
	return (int)n;
}

enum procfs_fd_kind procfs_parse_fd_target(const char *target, uint64_t *inode) {
	static const struct { const char *prefix; enum procfs_fd_kind kind; } kinds[] = {
		{ "pipe:[", PROCFS_FD_PIPE },
		{ "socket:[", PROCFS_FD_SOCKET },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t len = strlen(kinds[i].prefix);
		char *end;
		if (strncmp(target, kinds[i].prefix, len) != 0)
			continue;
		errno = 0;
		*inode = strtoull(target + len, &end, 10);
		if (errno || end == target + len || strcmp(end, "]") != 0)
			return PROCFS_FD_OTHER;
		return kinds[i].kind;
	}
	return PROCFS_FD_OTHER;
}

int procfs_parse_io(const char *buf, struct procfs_io *ret) {
	int found = 0;

	memset(ret, 0, sizeof(*ret));
	for (const char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		unsigned long long v;
		if (sscanf(line, "rchar: %llu", &v) == 1)
			ret->rchar = v, found++;
		else if (sscanf(line, "wchar: %llu", &v) == 1)
			ret->wchar = v, found++;
		else if (sscanf(line, "syscr: %llu", &v) == 1)
			ret->syscr = v, found++;
		else if (sscanf(line, "syscw: %llu", &v) == 1)
			ret->syscw = v, found++;
	}
	return found == 4 ? 0 : -EINVAL;
}
