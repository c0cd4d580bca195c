#include "taskiter.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpflog.h"
#include "log.h"
#include "taskiter-records.h"

/* The compiled BPF object, built into ccxd. */
__asm__(".section .rodata\n"
	".balign 8\n"
	"taskiter_object:\n"
	".incbin \"" TASKITER_OBJECT "\"\n"
	"taskiter_object_end:\n"
	".previous\n");
extern const char taskiter_object[], taskiter_object_end[];

/* The sizes of the maps wanted_SIZE of the batch iterator. */
#define N_BATCH_MAPS 4
static const size_t batch_sizes[N_BATCH_MAPS] = { 64, 256, 1024, TASKITER_BATCH_MAX };

struct taskiter {
	struct bpf_object *obj;
	struct bpf_program *prog[2];   /* by enum taskiter_kind */
	struct batch_map {         /* the batch iterator's, by size */
		int link;          /* the iterator bound to it; -1 without */
		struct taskiter_wanted *wanted;   /* its memory, mapped */
		size_t size, used; /* used: its elements that hold a pid, from the first */
	} batch[N_BATCH_MAPS];
	char *log;                 /* the verifier's, while the object is open */
	char no_batch[384];        /* why there is no batch iterator, when it was asked for */
};

/* What one read(2) of an iterator gives at most: the kernel's buffer for
 * it (a smaller read takes as many calls as it falls short). */
#define ITER_READ_SIZE (32 * 1024)

/* Everything the iterator has, into a buffer of whole records. */
static int drain(int link, size_t record, char **ret, size_t *n) {
	size_t size = 0, allocated = ITER_READ_SIZE;
	char *buf = malloc(allocated);
	int fd = bpf_iter_create(link), r = fd < 0 ? -errno : buf ? 0 : -ENOMEM;

	while (r == 0) {
		ssize_t got;
		if (size == allocated) {
			char *grown = realloc(buf, 2 * allocated);
			if (!grown) {
				r = -ENOMEM;
				break;
			}
			buf = grown;
			allocated *= 2;
		}
		got = read(fd, buf + size, allocated - size);
		if (got == 0)
			break;
		if (got > 0)
			size += (size_t)got;
		else if (errno != EINTR)
			r = -errno;
	}
	if (fd >= 0)
		close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	*n = size / record;
	return 0;
}

/* Iterators bound to one process came with Linux 6.1; a kernel must answer
 * for ourselves with our own threads alone, all of one start time. */
static int answers_for_one(const struct taskiter *it) {
	struct taskiter_thread_record *rec;
	int fd = taskiter_open(it, getpid(), TASKITER_THREADS), r;
	size_t n;
	char *buf;

	if (fd < 0)
		return fd;
	r = drain(fd, sizeof(*rec), &buf, &n);
	close(fd);
	if (r < 0)
		return r;
	rec = (struct taskiter_thread_record *)buf;
	for (size_t i = 0; i < n; i++)
		if (rec[i].leader_start_ns != rec[0].leader_start_ns)
			r = -EOPNOTSUPP;
	if (n == 0)
		r = -EOPNOTSUPP;
	free(buf);
	return r;
}

/* Nothing loaded. */
static void reset(struct taskiter *it) {
	it->obj = NULL;
	it->log = NULL;
	it->prog[TASKITER_THREADS] = it->prog[TASKITER_FILES] = NULL;
	for (size_t i = 0; i < N_BATCH_MAPS; i++)
		it->batch[i] = (struct batch_map){ .link = -1 };
}

static void unload(struct taskiter *it) {
	for (size_t i = 0; i < N_BATCH_MAPS; i++) {
		if (it->batch[i].link >= 0)
			close(it->batch[i].link);
		if (it->batch[i].wanted)
			munmap(it->batch[i].wanted, it->batch[i].size * sizeof(struct taskiter_wanted));
	}
	bpf_object__close(it->obj);
	free(it->log);
	reset(it);
}

/* The batch iterator bound to the map wanted_SIZE, and its memory. */
static int bind_batch(struct taskiter *it, struct bpf_program *prog, struct batch_map *b, size_t size) {
	char name[32];
	void *wanted;
	int map;

	snprintf(name, sizeof(name), "wanted_%zu", size);
	map = bpf_object__find_map_fd_by_name(it->obj, name);
	if (map < 0)
		return -ENOENT;
	wanted = mmap(NULL, size * sizeof(struct taskiter_wanted), PROT_READ | PROT_WRITE, MAP_SHARED, map, 0);
	if (wanted == MAP_FAILED)
		return -errno;
	b->wanted = wanted;
	b->size = size;
	union bpf_iter_link_info info = { .map.map_fd = (__u32)map };
	LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &info, .iter_info_len = sizeof(info));
	b->link = bpf_link_create(bpf_program__fd(prog), 0, BPF_TRACE_ITER, &opts);
	return b->link < 0 ? -errno : 0;
}

/* The object, loaded with the batch iterator or without it (then unload()
 * and load again: a kernel before 6.13 lacks what it needs). */
static int load(struct taskiter *it, bool batch) {
	struct bpf_program *prog;
	int r;

	/* The verifier's log, for the debug log and the reason a batch is
	 * refused. */
	it->log = calloc(1, BPFLOG_SIZE);
	if (!it->log)
		return -ENOMEM;
	it->obj = bpflog_open(taskiter_object, (size_t)(taskiter_object_end - taskiter_object), it->log);
	if (!it->obj)
		return -errno;
	prog = bpf_object__find_program_by_name(it->obj, "batch");
	it->prog[TASKITER_THREADS] = bpf_object__find_program_by_name(it->obj, "threads");
	it->prog[TASKITER_FILES] = bpf_object__find_program_by_name(it->obj, "files");
	if (!prog || !it->prog[TASKITER_THREADS] || !it->prog[TASKITER_FILES])
		return -ENOENT;
	bpf_program__set_autoload(prog, batch);
	r = bpflog_load(it->obj, it->log);
	for (size_t i = 0; r == 0 && batch && i < N_BATCH_MAPS; i++)
		r = bind_batch(it, prog, &it->batch[i], batch_sizes[i]);
	return r;
}

/* The batch iterator must find ourselves by our pid, as we number it. */
static int batch_answers(struct taskiter *it) {
	struct taskiter_batch_entry self = { .pid = getpid() };
	struct procfs_stat st;
	int r = procfs_read_stat("", self.pid, &st);

	if (r < 0)
		return r;
	self.start_time = st.start_time;
	r = taskiter_read_batch(it, &self, 1);
	if (r == 0 && self.r < 0)
		r = -EOPNOTSUPP;
	free(self.process.threads);
	free(self.fds);
	return r;
}

/* Why the kernel would not give the batch iterator, in words for the log
 * and for status: what was refused, and that each active process is read
 * through iterators of its own instead. */
static void explain_no_batch(struct taskiter *it, int r, bool loaded) {
	char said[160];
	const char *why;

	if (loaded)
		why = "it loaded but did not find ccxd itself by its pid";
	else if (r == -EPERM || r == -EACCES)
		why = "this kernel refuses to load it (an iter/bpf_map_elem program), "
		      "although it loads the per-process iterators";
	else if (r == -EINVAL || r == -ENOENT || r == -ESRCH)
		why = "this kernel lacks what it needs (bpf_task_from_vpid(), Linux 6.13)";
	else
		why = "loading it failed";
	bpflog_verifier_said(loaded ? "" : it->log, said, sizeof(said));
	snprintf(it->no_batch, sizeof(it->no_batch), "no BPF batch iterator: %s (%s%s)", why, strerror(-r), said);
}

int taskiter_new(bool batch, struct taskiter **ret) {
	struct taskiter *it = calloc(1, sizeof(*it));
	bool loaded = false;
	int r = 0;

	if (!it)
		return -ENOMEM;
	reset(it);
	libbpf_set_print(bpflog_print);
	if (batch) {
		r = load(it, true);
		loaded = r == 0;
		if (r == 0)
			r = batch_answers(it);
		if (r < 0) {
			explain_no_batch(it, r, loaded);
			unload(it);
		}
	}
	if (!batch || r < 0)
		r = load(it, false);
	if (r == 0)
		r = answers_for_one(it);
	if (r < 0) {
		taskiter_free(it);
		return r;
	}
	*ret = it;
	return 0;
}

const char *taskiter_no_batch(const struct taskiter *it) {
	return it->no_batch[0] ? it->no_batch : NULL;
}

void taskiter_free(struct taskiter *it) {
	if (!it)
		return;
	unload(it);
	free(it);
}

bool taskiter_can_batch(const struct taskiter *it) {
	return it->batch[N_BATCH_MAPS - 1].link >= 0;
}

int taskiter_open(const struct taskiter *it, pid_t pid, enum taskiter_kind kind) {
	union bpf_iter_link_info info;
	LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &info, .iter_info_len = sizeof(info));
	int fd;

	memset(&info, 0, sizeof(info));
	info.task.pid = (__u32)pid;
	fd = bpf_link_create(bpf_program__fd(it->prog[kind]), 0, BPF_TRACE_ITER, &opts);
	return fd < 0 ? -errno : fd;
}

/* Whether a record's process is the one that started at start_time: the
 * kernel gives /proc/PID/stat's start time as nanoseconds since boot over
 * the length of a clock tick. */
static bool same_process(uint64_t start_ns, uint64_t start_time) {
	return procfs_ticks_of_ns(start_ns) == start_time;
}

static int compare_tid(const void *a, const void *b) {
	pid_t x = ((const struct taskiter_thread *)a)->tid, y = ((const struct taskiter_thread *)b)->tid;

	return (x > y) - (x < y);
}

/* The process's figures from its thread records (n, one at least). */
static int process_of(const struct taskiter_thread_record *rec, size_t n, struct taskiter_process *ret) {
	struct taskiter_process p = { 0 };

	p.threads = calloc(n, sizeof(*p.threads));
	if (!p.threads)
		return -ENOMEM;
	p.run_ns = rec[0].ended_run_ns;
	for (size_t i = 0; i < n; i++) {
		p.threads[i] = (struct taskiter_thread){ .tid = (pid_t)rec[i].tid, .ns = rec[i].run_ns + rec[i].wait_ns };
		p.run_ns += rec[i].run_ns;
		p.io.rchar += rec[i].rchar;
		p.io.wchar += rec[i].wchar;
		p.switches.voluntary += rec[i].voluntary;
		p.switches.involuntary += rec[i].involuntary;
	}
	p.n_threads = n;
	qsort(p.threads, n, sizeof(*p.threads), compare_tid);
	*ret = p;
	return 0;
}

int taskiter_read_threads(int fd, uint64_t start_time, struct taskiter_process *ret) {
	struct taskiter_thread_record *rec;
	size_t n;
	char *buf;
	int r = drain(fd, sizeof(*rec), &buf, &n);

	if (r < 0)
		return r;
	rec = (struct taskiter_thread_record *)buf;
	/* No thread left: gone, or a pid that another process has now. */
	if (n == 0 || !same_process(rec[0].leader_start_ns, start_time))
		r = -ESRCH;
	else
		r = process_of(rec, n, ret);
	free(buf);
	return r;
}

static void fds_of(const struct taskiter_file_record *rec, size_t n, struct procfs_fd *ret) {
	for (size_t i = 0; i < n; i++)
		ret[i] = (struct procfs_fd){ .fd = (int)rec[i].fd,
					     .kind = rec[i].socket ? PROCFS_FD_SOCKET : PROCFS_FD_PIPE,
					     .inode = rec[i].inode,
					     .readable = (rec[i].f_mode & 0x1) != 0,
					     .writable = (rec[i].f_mode & 0x2) != 0 };
}

int taskiter_read_files(int fd, uint64_t start_time, struct procfs_fd **ret, size_t *n,
			struct taskiter_process *single) {
	const struct taskiter_thread_record *thread;
	const struct taskiter_file_record *rec;
	struct procfs_fd *fds;
	size_t size, count;
	char *buf;
	int r = drain(fd, 1, &buf, &size);

	if (r < 0)
		return r;
	*single = (struct taskiter_process){ .n_threads = 0 };
	if (size < sizeof(*thread)) {   /* a process without files, or gone */
		free(buf);
		*ret = NULL;
		*n = 0;
		return 0;
	}
	thread = (const struct taskiter_thread_record *)buf;
	rec = (const struct taskiter_file_record *)(buf + sizeof(*thread));
	count = (size - sizeof(*thread)) / sizeof(*rec);
	if (!same_process(thread->leader_start_ns, start_time)) {
		free(buf);
		return -ESRCH;
	}
	fds = calloc(count ? count : 1, sizeof(*fds));
	if (!fds || (thread->threads == 1 && process_of(thread, 1, single) < 0)) {
		free(fds);
		free(buf);
		return -ENOMEM;
	}
	fds_of(rec, count, fds);
	free(buf);
	*ret = fds;
	*n = count;
	return 0;
}

/* The smallest map that holds the pids of e, holding them and what to read
 * of each: the map to read. Those past the largest map's size read -ENOSPC. */
static struct batch_map *want(struct taskiter *it, struct taskiter_batch_entry *e, size_t n) {
	struct batch_map *b = &it->batch[0];
	size_t used;

	while (b->size < n && b < &it->batch[N_BATCH_MAPS - 1])
		b++;
	used = n < b->size ? n : b->size;
	for (size_t i = 0; i < used; i++)
		b->wanted[i] = (struct taskiter_wanted){ .pid = (__u32)e[i].pid,
							 .flags = e[i].stat_only ? TASKITER_BATCH_STAT_ONLY : 0 };
	for (size_t i = used; i < n; i++)
		e[i].r = -ENOSPC;
	if (b->used > used)   /* what it held past them from an earlier read */
		memset(b->wanted + used, 0, (b->used - used) * sizeof(*b->wanted));
	b->used = used;
	return b;
}

static int compare_entry(const void *key, const void *entry) {
	pid_t x = *(const pid_t *)key, y = ((const struct taskiter_batch_entry *)entry)->pid;

	return (x > y) - (x < y);
}

/* One batch record, with its fds, into the entry of its pid. */
static int take(const struct taskiter_batch_record *head, const struct taskiter_file_record *rec,
		struct taskiter_batch_entry *e) {
	if (!same_process(head->thread.leader_start_ns, e->start_time))
		return 0;   /* the pid is another process's now: -ESRCH stays */
	if (head->truncated) {
		e->r = -E2BIG;
		return 0;
	}
	if (!e->stat_only) {
		e->fds = calloc(head->n_fds ? head->n_fds : 1, sizeof(*e->fds));
		if (!e->fds || (head->thread.threads == 1 && process_of(&head->thread, 1, &e->process) < 0))
			return -ENOMEM;
		fds_of(rec, head->n_fds, e->fds);
		e->n_fds = head->n_fds;
	}
	e->threads = head->thread.threads;
	e->last_cpu = (int)head->cpu;
	e->kthread = head->kthread != 0;
	e->run_ns = head->run_ns;
	memcpy(e->comm, head->comm, sizeof(e->comm));
	e->comm[sizeof(e->comm) - 1] = '\0';
	e->r = 0;
	return 0;
}

int taskiter_read_batch(struct taskiter *it, struct taskiter_batch_entry *e, size_t n) {
	const struct taskiter_batch_record *head;
	size_t size, off = 0;
	char *buf;
	int r;

	for (size_t i = 0; i < n; i++) {
		e[i].r = -ESRCH;   /* until its record is read */
		e[i].process = (struct taskiter_process){ .n_threads = 0 };
		e[i].fds = NULL;
		e[i].n_fds = 0;
	}
	r = drain(want(it, e, n)->link, 1, &buf, &size);
	if (r < 0)
		return r;
	while (r == 0 && size - off >= sizeof(*head)) {
		const struct taskiter_file_record *fds;
		struct taskiter_batch_entry *hit;
		pid_t pid;

		head = (const struct taskiter_batch_record *)(buf + off);
		fds = (const struct taskiter_file_record *)(buf + off + sizeof(*head));
		off += sizeof(*head);
		if (head->n_fds > (size - off) / sizeof(*fds)) {
			r = -EBADMSG;
			break;
		}
		off += head->n_fds * sizeof(*fds);
		pid = (pid_t)head->pid;
		hit = bsearch(&pid, e, n, sizeof(*e), compare_entry);
		if (hit && hit->r == -ESRCH)
			r = take(head, fds, hit);
	}
	free(buf);
	return r;
}
