#include "traffic.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpflog.h"
#include "log.h"
#include "procfs.h"
#include "traffic-records.h"

/* The compiled BPF object, built into ccxd. */
__asm__(".section .rodata\n"
	".balign 8\n"
	"traffic_object:\n"
	".incbin \"" TRAFFIC_OBJECT "\"\n"
	"traffic_object_end:\n"
	".previous\n");
extern const char traffic_object[], traffic_object_end[];

_Static_assert(TRAFFIC_PIPE == TRAFFIC_REC_PIPE && TRAFFIC_UNIX == TRAFFIC_REC_UNIX && TRAFFIC_TCP == TRAFFIC_REC_TCP,
	       "kinds");
_Static_assert(TRAFFIC_WRITE == TRAFFIC_REC_WRITE && TRAFFIC_READ == TRAFFIC_REC_READ, "directions");

/* What is counted, each on its own: a kernel may refuse one and not the
 * others. */
enum part {
	PART_PIPES,
	PART_SPLICE,
	PART_SOCKETS,
	PART_PIPE_SYSCALLS,        /* in place of PART_PIPES and PART_SPLICE, when asked for */
	N_PARTS,
};

static const char *const part_names[N_PARTS] = { "pipes", "splice(2) into and out of pipes", "sockets",
						 "pipes at system calls' exit" };

#define N_PROGRAMS 6
static const struct program {
	const char *name;          /* in the object */
	enum part part;
	bool tracepoint;           /* tp_btf: targets are tracepoints */
	const char *targets[2];    /* what it attaches to: the first the kernel has */
} programs[N_PROGRAMS] = {
	/* anon_pipe_*() in recent kernels, pipe_*() in older ones. */
	{ "pipe_write", PART_PIPES, false, { "anon_pipe_write", "pipe_write" } },
	{ "pipe_read", PART_PIPES, false, { "anon_pipe_read", "pipe_read" } },
	{ "splice", PART_SPLICE, false, { "do_splice", NULL } },
	{ "sock_send", PART_SOCKETS, true, { "sock_send_length", NULL } },
	{ "sock_recv", PART_SOCKETS, true, { "sock_recv_length", NULL } },
	{ "pipe_syscalls", PART_PIPE_SYSCALLS, true, { "sys_exit", NULL } },   /* last: see load_parts() */
};

struct traffic {
	struct bpf_object *obj;
	const char *target[N_PROGRAMS];    /* the kernel's, NULL where it has none */
	struct bpf_link *link[N_PROGRAMS];
	int counts[2], bss, thinned;   /* the maps' fds */
	uint32_t thinned_words;    /* thinned's elements: 64 pids each */
	struct traffic_shared *shared;   /* the programs' global variables, mapped */
	size_t shared_size;
	bool one_by_one;           /* the kernel refused to read and delete in batches */
	uint64_t lost;
	char *log;                 /* the verifier's, while loading */
	char refused[N_PARTS][256];   /* what the kernel refused of a part, and its errno */
	char note[N_PARTS * 320];
};

/* The first of a program's targets that the kernel's BTF has (a function,
 * or a tracepoint's btf_trace_ typedef); NULL when none. */
static const char *find_target(const struct btf *btf, const struct program *p) {
	for (size_t i = 0; i < 2 && p->targets[i]; i++) {
		char name[64];
		if (p->tracepoint)
			snprintf(name, sizeof(name), "btf_trace_%s", p->targets[i]);
		else
			snprintf(name, sizeof(name), "%s", p->targets[i]);
		if (btf__find_by_name_kind(btf, name, p->tracepoint ? BTF_KIND_TYPEDEF : BTF_KIND_FUNC) > 0)
			return p->targets[i];
	}
	return NULL;
}

/* The programs of part, as "fexit/anon_pipe_write, fexit/anon_pipe_read". */
static void part_programs(const struct traffic *t, enum part part, char *buf, size_t size) {
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_PROGRAMS && len < size; i++)
		if (programs[i].part == part)
			len += (size_t)snprintf(buf + len, size - len, "%s%s/%s", len ? ", " : "",
						programs[i].tracepoint ? "tp_btf" : "fexit",
						t->target[i] ? t->target[i] : programs[i].targets[0]);
}

static void refused(struct traffic *t, enum part part, const char *what, int r) {
	char progs[160], said[160] = "";

	part_programs(t, part, progs, sizeof(progs));
	if (t->log && strcmp(what, "load") == 0)
		bpflog_verifier_said(t->log, said, sizeof(said));
	snprintf(t->refused[part], sizeof(t->refused[part]), "the kernel refused to %s %s (%s%s)", what, progs,
		 strerror(-r), said);
	log_debug("traffic: %s: %s", part_names[part], t->refused[part]);
}

/* The pid namespace whose numbers the counts carry: ccxd's. 0 for the
 * initial one (the kernel's own numbers, faster to get), and where it
 * cannot be told. */
static __u32 pidns_inum(void) {
	long long ino = procfs_pid_namespace();

	return ino > 0 ? (__u32)ino : 0;
}

static void unload(struct traffic *t) {
	for (size_t i = 0; i < N_PROGRAMS; i++) {
		bpf_link__destroy(t->link[i]);
		t->link[i] = NULL;
	}
	if (t->shared)
		munmap(t->shared, t->shared_size);
	t->shared = NULL;
	bpf_object__close(t->obj);
	t->obj = NULL;
	t->counts[0] = t->counts[1] = t->bss = t->thinned = -1;
}

/* The object with the programs of the parts in mask (a bit per part), the
 * others left out. The maps alone with mask 0. */
static int load(struct traffic *t, unsigned mask) {
	struct traffic_config config = { .pidns_inum = pidns_inum() };
	struct bpf_map *rodata, *bss;
	int r;

	memset(t->log, 0, BPFLOG_SIZE);
	t->obj = bpflog_open(traffic_object, (size_t)(traffic_object_end - traffic_object), t->log);
	if (!t->obj)
		return -errno;
	rodata = bpf_object__find_map_by_name(t->obj, ".rodata");
	if (!rodata)
		return -ENOENT;
	r = bpf_map__set_initial_value(rodata, &config, sizeof(config));
	if (r == 0)
		r = bpf_map__set_max_entries(bpf_object__find_map_by_name(t->obj, "thinned"), t->thinned_words);
	for (size_t i = 0; r == 0 && i < N_PROGRAMS; i++) {
		struct bpf_program *prog = bpf_object__find_program_by_name(t->obj, programs[i].name);
		if (!prog)
			return -ENOENT;
		if ((mask & (1U << programs[i].part)) && t->target[i])
			r = bpf_program__set_attach_target(prog, 0, t->target[i]);
		else
			r = bpf_program__set_autoload(prog, false);
	}
	if (r == 0)
		r = bpflog_load(t->obj, t->log);
	if (r < 0)
		return r;
	t->counts[0] = bpf_object__find_map_fd_by_name(t->obj, "counts_0");
	t->counts[1] = bpf_object__find_map_fd_by_name(t->obj, "counts_1");
	t->thinned = bpf_object__find_map_fd_by_name(t->obj, "thinned");
	bss = bpf_object__find_map_by_name(t->obj, ".bss");
	t->bss = bss ? bpf_map__fd(bss) : -1;
	if (t->counts[0] < 0 || t->counts[1] < 0 || t->bss < 0 || t->thinned < 0)
		return -ENOENT;
	if (bpf_map__value_size(bss) < sizeof(*t->shared))
		return -EINVAL;
	/* libbpf makes .bss mappable; the page holds shared alone. */
	t->shared_size = (size_t)sysconf(_SC_PAGESIZE);
	t->shared = mmap(NULL, t->shared_size, PROT_READ | PROT_WRITE, MAP_SHARED, t->bss, 0);
	if (t->shared == MAP_FAILED) {
		t->shared = NULL;
		return -errno;
	}
	return 0;
}

/* Whether all the programs of part are attached. */
static bool counted(const struct traffic *t, enum part part) {
	for (size_t i = 0; i < N_PROGRAMS; i++)
		if (programs[i].part == part && !t->link[i])
			return false;
	return true;
}

static void detach(struct traffic *t, enum part part) {
	for (size_t i = 0; i < N_PROGRAMS; i++)
		if (programs[i].part == part) {
			bpf_link__destroy(t->link[i]);
			t->link[i] = NULL;
		}
}

/* The programs of the parts in mask, loaded, and attached where needed:
 * the pipes at system calls' exit only where the fexit programs are not
 * (they count splice(2) too: not twice). A part that the kernel refuses is
 * left out, with why. */
static int load_parts(struct traffic *t, unsigned mask) {
	int r = load(t, mask);

	if (r < 0 && mask) {
		/* Which part the kernel refused: each on its own. */
		for (enum part p = 0; p < N_PARTS; p++) {
			if (!(mask & (1U << p)))
				continue;
			unload(t);
			r = load(t, 1U << p);
			if (r < 0) {
				refused(t, p, "load", r);
				mask &= ~(1U << p);
			}
		}
		unload(t);
		r = load(t, mask);
	}
	if (r < 0)
		return r;   /* not even the maps */
	for (size_t i = 0; i < N_PROGRAMS; i++) {
		enum part p = programs[i].part;
		if (!(mask & (1U << p)) || (p == PART_PIPE_SYSCALLS && counted(t, PART_PIPES)))
			continue;
		t->link[i] = bpf_program__attach(bpf_object__find_program_by_name(t->obj, programs[i].name));
		if (!t->link[i]) {
			refused(t, p, "attach", -errno);
			mask &= ~(1U << p);
			detach(t, p);   /* half a part would mislead */
		}
	}
	if (counted(t, PART_PIPE_SYSCALLS))
		detach(t, PART_SPLICE);
	return 0;
}

static __attribute__((format(printf, 2, 3))) void add_note(struct traffic *t, const char *fmt, ...) {
	size_t len = strlen(t->note);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->note + len, sizeof(t->note) - len, fmt, ap);
	va_end(ap);
}

/* What is not counted, from what the kernel refused. */
static void write_note(struct traffic *t) {
	t->note[0] = '\0';
	if (counted(t, PART_PIPE_SYSCALLS)) {
		add_note(t, "pipes counted at their system calls' exit only, not through io_uring, vmsplice(2) "
			 "nor tee(2): %s", t->refused[PART_PIPES]);
	} else if (!counted(t, PART_PIPES)) {
		add_note(t, "pipes not counted: %s", t->refused[PART_PIPES]);
		if (t->refused[PART_PIPE_SYSCALLS][0])
			add_note(t, "; nor at their system calls' exit: %s", t->refused[PART_PIPE_SYSCALLS]);
	} else if (!counted(t, PART_SPLICE)) {
		add_note(t, "splice(2) into and out of pipes not counted: %s", t->refused[PART_SPLICE]);
	}
	if (!counted(t, PART_SOCKETS))
		add_note(t, "%ssockets not counted: %s", t->note[0] ? "; " : "", t->refused[PART_SOCKETS]);
}

int traffic_new(bool syscalls, struct traffic **ret) {
	struct traffic *t = calloc(1, sizeof(*t));
	struct btf *btf;
	unsigned mask = 0;
	int r;

	if (!t)
		return -ENOMEM;
	t->counts[0] = t->counts[1] = t->bss = t->thinned = -1;
	t->thinned_words = procfs_pid_words();
	t->log = calloc(1, BPFLOG_SIZE);
	if (!t->log) {
		free(t);
		return -ENOMEM;
	}
	libbpf_set_print(bpflog_print);
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		r = -errno;
		traffic_free(t);
		return r;
	}
	for (size_t i = 0; i < N_PROGRAMS; i++)
		t->target[i] = find_target(btf, &programs[i]);
	btf__free(btf);
	for (enum part p = 0; p < N_PARTS; p++) {
		bool all = true;
		char progs[160];
		if (p == PART_PIPE_SYSCALLS && !syscalls)
			continue;
#ifndef __x86_64__
		if (p == PART_PIPE_SYSCALLS) {   /* it reads x86-64's registers */
			snprintf(t->refused[p], sizeof(t->refused[p]), "only on x86-64");
			continue;
		}
#endif
		for (size_t i = 0; i < N_PROGRAMS; i++)
			all &= programs[i].part != p || t->target[i];
		if (all) {
			mask |= 1U << p;
			continue;
		}
		part_programs(t, p, progs, sizeof(progs));
		snprintf(t->refused[p], sizeof(t->refused[p]), "this kernel has none of %s", progs);
	}
	r = load_parts(t, mask);
	free(t->log);
	t->log = NULL;
	if (r < 0) {
		traffic_free(t);
		return r;
	}
	write_note(t);
	*ret = t;
	return 0;
}

void traffic_free(struct traffic *t) {
	if (!t)
		return;
	unload(t);
	free(t->log);
	free(t);
}

bool traffic_counts_pipes(const struct traffic *t) {
	return counted(t, PART_PIPES) || counted(t, PART_PIPE_SYSCALLS);
}

bool traffic_counts_sockets(const struct traffic *t) {
	return counted(t, PART_SOCKETS);
}

const char *traffic_note(const struct traffic *t) {
	return t->note[0] ? t->note : NULL;
}

uint64_t traffic_lost(const struct traffic *t) {
	return t->lost;
}

int traffic_thin(struct traffic *t, pid_t pid, bool thin) {
	__u32 word = (__u32)pid / 64;
	__u64 bits, bit = 1ULL << ((__u32)pid % 64);

	if (pid <= 0 || word >= t->thinned_words)
		return -ERANGE;
	if (bpf_map_lookup_elem(t->thinned, &word, &bits) < 0)
		return -errno;
	if (!!(bits & bit) == thin)
		return 0;
	bits = thin ? bits | bit : bits & ~bit;
	/* The programs only read the map: this is its one writer. */
	return bpf_map_update_elem(t->thinned, &word, &bits, BPF_ANY) < 0 ? -errno : 0;
}

/* Turns the generation, so that the programs count into the other map
 * from now on, and returns the one they counted into until now, once none
 * is at work in it any more (shared.inflight; traffic.bpf.c's count()):
 * the programs already at work, a few microseconds, unless one was
 * preempted; not waited for beyond 20 ms. */
static int turn(struct traffic *t) {
	struct timespec pause = { .tv_nsec = 100 * 1000 };
	unsigned old = __atomic_load_n(&t->shared->generation, __ATOMIC_SEQ_CST) & 1;

	__atomic_store_n(&t->shared->generation, !old, __ATOMIC_SEQ_CST);
	for (int i = 0; __atomic_load_n(&t->shared->inflight[old], __ATOMIC_SEQ_CST) != 0; i++) {
		if (i < 100)
			sched_yield();
		else if (i < 300)
			nanosleep(&pause, NULL);
		else
			break;   /* counted late, in the read after next */
	}
	return t->counts[old];
}

struct entries {
	struct traffic_entry *e;
	size_t n, allocated;
};

static int add(struct entries *to, const struct traffic_key *k, const struct traffic_value *v) {
	if (to->n == to->allocated) {
		size_t allocated = to->allocated ? 2 * to->allocated : 64;
		struct traffic_entry *e = realloc(to->e, allocated * sizeof(*e));
		if (!e)
			return -ENOMEM;
		to->e = e;
		to->allocated = allocated;
	}
	to->e[to->n++] = (struct traffic_entry){ .queue = k->queue,
						 .pid = (pid_t)k->pid,
						 .kind = (enum traffic_kind)k->kind,
						 .direction = k->direction == TRAFFIC_REC_READ ? TRAFFIC_READ : TRAFFIC_WRITE,
						 .bytes = v->bytes,
						 .messages = v->messages };
	return 0;
}

/* Whatever a map still holds, an element at a time: where the kernel has
 * no batch operations on it. The next key is found before the element is
 * deleted (a deleted key starts the walk again). */
static int drain_one_by_one(int fd, struct entries *to) {
	struct traffic_key key, next;
	struct traffic_value value;
	int r = bpf_map_get_next_key(fd, NULL, &key);

	while (r == 0) {
		bool more = bpf_map_get_next_key(fd, &key, &next) == 0;
		if (bpf_map_lookup_elem(fd, &key, &value) == 0 && (r = add(to, &key, &value)) < 0)
			return r;
		if (bpf_map_delete_elem(fd, &key) < 0 && errno != ENOENT)
			return -errno;
		key = next;
		r = more ? 0 : -ENOENT;
	}
	return r == -ENOENT ? 0 : r;
}

#define BATCH 1024

/* Everything a map holds, deleted as it is read: in batches of BATCH, one
 * system call each (Linux 5.6), or one by one where the kernel refuses. */
static int drain(struct traffic *t, int fd, struct entries *to) {
	struct traffic_key *keys = NULL;
	struct traffic_value *values = NULL;
	bool batches = !t->one_by_one;
	__u32 batch;
	int r = 0;

	if (batches) {
		keys = calloc(BATCH, sizeof(*keys));
		values = calloc(BATCH, sizeof(*values));
		if (!keys || !values)
			r = -ENOMEM;
	}
	for (bool first = true; r == 0 && batches; first = false) {
		__u32 count = BATCH;
		int got = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &batch, &batch, keys, values, &count, NULL);
		for (__u32 i = 0; i < count && r == 0; i++)
			r = add(to, &keys[i], &values[i]);
		if (got == -ENOENT || (got == 0 && count == 0))   /* all read */
			break;
		if (got < 0) {
			/* The rest one by one; for good where the kernel does
			 * not have or allow batches. */
			log_debug("traffic: reading the counts in batches failed (%s): one by one instead",
				  strerror(-got));
			t->one_by_one = got == -EINVAL || got == -EOPNOTSUPP || got == -524 /* ENOTSUPP */ ||
					got == -EPERM || got == -EACCES;
			batches = false;
		}
	}
	if (r == 0 && !batches)
		r = drain_one_by_one(fd, to);
	free(keys);
	free(values);
	return r;
}

static int compare_entry(const void *a, const void *b) {
	const struct traffic_entry *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->direction > y->direction) - (x->direction < y->direction);
}

int traffic_read(struct traffic *t, struct traffic_entry **ret, size_t *n) {
	struct entries to = { 0 };
	/* On failure, what it has not read is read with the read after next. */
	int r = drain(t, turn(t), &to);

	if (r < 0) {
		free(to.e);
		return r;
	}
	t->lost = __atomic_load_n(&t->shared->lost, __ATOMIC_RELAXED);
	if (to.n > 1)
		qsort(to.e, to.n, sizeof(*to.e), compare_entry);
	*ret = to.e;
	*n = to.n;
	return 0;
}

const struct traffic_entry *traffic_find(const struct traffic_entry *e, size_t n, enum traffic_kind kind,
					 uint64_t queue, pid_t pid) {
	struct traffic_entry key = { .kind = kind, .queue = queue, .pid = pid, .direction = TRAFFIC_WRITE };
	size_t lo = 0, hi = n;

	/* The first entry not before (kind, queue, pid). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (compare_entry(&e[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && e[lo].kind == kind && e[lo].queue == queue && e[lo].pid == pid ? &e[lo] : NULL;
}
