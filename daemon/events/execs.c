#include "execs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpflog.h"
#include "budget.h"
#include "execs-records.h"
#include "log.h"
#include "procfs.h"
#include "util.h"

/* The compiled BPF object, built into ccxd. */
__asm__(".section .rodata\n"
	".balign 8\n"
	"execs_object:\n"
	".incbin \"" EXECS_OBJECT "\"\n"
	"execs_object_end:\n"
	".previous\n");
extern const char execs_object[], execs_object_end[];

/* Records read between two looks at the clock. */
#define EXECS_BATCH 16
/* Records read in one turn of the event loop. The wake-up at real-time
 * priority pins the first record's program at once (priority.h); the rest
 * take turns with the other sources, at the same priority, so that other
 * users' execs, however many, never hold up a client or the sampler. */
#define EXECS_TURN 64

/* The last is the exec's start: where the kernel has no tracepoint for it
 * (before Linux 6.10), the renames stand in. */
static const char *const program_names[] = { "on_rename", "on_exec_end", "on_prepare" };
#define N_PROGRAMS (sizeof(program_names) / sizeof(program_names[0]))

struct execs {
	struct bpf_object *obj;
	struct bpf_link *link[N_PROGRAMS];
	struct ring_buffer *ring;
	sd_event *event;
	sd_event_source *io;
	sd_event_source *resume;   /* the next window, while the share of this one is spent */
	struct budget budget;
	int names, settings, dropped;   /* the maps' fds */
	struct rules_name *set;    /* the names in the map, for the next execs_set_rules() */
	size_t n_set;
	uint64_t *known;           /* the bitmap of processes, mapped: 64 pids a word */
	unsigned known_words;
	size_t known_size;         /* bytes mapped */
	const struct execs_running *running;   /* the execs reported at their rename, mapped */
	size_t running_size;
	struct execs_pin *pin;     /* the pin the exec's end looks for, mapped */
	size_t pin_size;
	bool every;                /* every exec is reported */
	bool rules_every;          /* the rules ask for every exec */
	unsigned outside;          /* processes of the table past the bitmap (pid_max raised since) */
	unsigned left;             /* records still to read in this turn, 0: all */
	execs_handler handler;
	void *userdata;
	struct execs_stats stats;
};

_Static_assert(sizeof(((struct execs_record *)0)->mask) == sizeof(cpu_set_t), "a record's mask is a cpu_set_t");

static int on_record(void *ctx, void *data, size_t size) {
	struct execs *x = ctx;
	const struct execs_record *rec = data;
	char comm[EXECS_COMM_LEN];
	struct execs_exec e;

	if (size < sizeof(*rec))
		return 0;
	if (rec->kind == EXECS_REC_ENTER)
		x->stats.at_enter++;
	else if (rec->kind == EXECS_REC_RENAME)
		x->stats.at_rename++;
	else
		x->stats.at_end++;
	memcpy(comm, rec->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	e = (struct execs_exec){ .tgid = (pid_t)rec->tgid, .ppid = (pid_t)rec->ppid, .comm = comm, .at_ns = rec->at_ns,
				 .start_time = procfs_ticks_of_ns(rec->start_ns), .pid_ino = rec->pid_ino, .exec_ns = rec->exec_ns,
				 .entering = rec->kind == EXECS_REC_ENTER };
	/* Both the kernel's unsigned longs, CPU n at bit n % 64 of word n / 64. */
	memcpy(&e.mask, rec->mask, sizeof(e.mask));
	x->handler(x->userdata, &e);
	/* libbpf stops at a negative return, this record counted as read. */
	return x->left && --x->left == 0 ? -EAGAIN : 0;
}

static int on_resume(sd_event_source *s, uint64_t usec, void *userdata) {
	struct execs *x = userdata;

	(void)s;
	(void)usec;
	return sd_event_source_set_enabled(x->io, SD_EVENT_ON);
}

/* The share of this window spent: the ring keeps what comes meanwhile (and
 * counts what it cannot hold) until the next. */
static void wait_for_share(struct execs *x) {
	uint64_t at = budget_next_usec(&x->budget);
	int r;

	r = sd_event_source_set_enabled(x->io, SD_EVENT_OFF);
	if (r >= 0 && x->resume)
		r = sd_event_source_set_time(x->resume, at);
	if (r >= 0 && x->resume)
		r = sd_event_source_set_enabled(x->resume, SD_EVENT_ONESHOT);
	else if (r >= 0)
		r = sd_event_add_time(x->event, &x->resume, CLOCK_MONOTONIC, at, EXECS_RESUME_ACCURACY_USEC, on_resume, x);
	if (r < 0) {
		/* Never left off: reading on is better than never again. */
		log_warning_errno(r, "Failed to put exec records off to the next window, reading on: %m");
		sd_event_source_set_enabled(x->io, SD_EVENT_ON);
	}
}

/* Reads at most max records (0: as many as the share allows), EXECS_BATCH
 * at a time, charging the CPU they took since cpu (the thread's CPU time) to
 * the share. Returns true when more may be waiting. */
static bool read_records(struct execs *x, unsigned max, uint64_t cpu) {
	unsigned done = 0;

	while (max == 0 || done < max) {
		unsigned batch = max == 0 || max - done > EXECS_BATCH ? EXECS_BATCH : max - done;
		uint64_t now, before = cpu;
		int r;

		if (!budget_left(&x->budget, util_usec(CLOCK_MONOTONIC))) {
			wait_for_share(x);
			return true;
		}
		x->left = batch;
		r = ring_buffer__consume(x->ring);
		x->left = 0;
		cpu = util_usec(CLOCK_THREAD_CPUTIME_ID);
		now = util_usec(CLOCK_MONOTONIC);
		budget_charge(&x->budget, now, cpu - before);
		if (r != -EAGAIN) {
			if (r < 0)
				log_warning_errno(r, "Failed to read exec records: %m");
			return false;
		}
		done += batch;
	}
	return true;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
	struct execs *x = userdata;

	(void)s;
	(void)fd;
	(void)revents;
	read_records(x, EXECS_TURN, util_usec(CLOCK_THREAD_CPUTIME_ID));
	return 0;
}

/* A BPF array (BPF_F_MMAPABLE) of bytes in ccxd's memory, *size set to
 * what is mapped: the kernel maps it whole pages at a time. NULL with
 * errno set when it cannot. */
static void *map_array(struct execs *x, const char *name, size_t bytes, int prot, size_t *size) {
	long page = sysconf(_SC_PAGESIZE);
	void *m;

	*size = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
	m = mmap(NULL, *size, prot, MAP_SHARED, bpf_object__find_map_fd_by_name(x->obj, name), 0);
	return m == MAP_FAILED ? NULL : m;
}

static int map_arrays(struct execs *x, char *why, size_t why_size) {
	x->known = map_array(x, "known", (size_t)x->known_words * sizeof(*x->known), PROT_READ | PROT_WRITE,
			     &x->known_size);
	if (x->known)
		x->running = map_array(x, "running", EXECS_RUNNING_SLOTS * sizeof(*x->running), PROT_READ,
				       &x->running_size);
	if (x->running)
		x->pin = map_array(x, "pin", sizeof(*x->pin), PROT_READ | PROT_WRITE, &x->pin_size);
	if (!x->pin) {
		int r = -errno;
		snprintf(why, why_size, "the exec programs' %s cannot be mapped (%s)",
			 !x->known ? "map of processes" : !x->running ? "map of execs" : "pin", strerror(-r));
		return r;
	}
	return 0;
}

static int load(struct execs *x, char *log, char *why, size_t why_size) {
	char said[160] = "";
	int r;

	x->obj = bpflog_open(execs_object, (size_t)(execs_object_end - execs_object), log);
	if (!x->obj) {
		r = -errno;
		snprintf(why, why_size, "libbpf cannot open the exec programs (%s)", strerror(-r));
		return r;
	}
	r = bpf_map__set_max_entries(bpf_object__find_map_by_name(x->obj, "known"), x->known_words);
	if (r < 0) {
		snprintf(why, why_size, "the map of processes cannot be sized (%s)", strerror(-r));
		return r;
	}
	r = bpflog_load(x->obj, log);
	if (r < 0) {
		bpflog_verifier_said(log, said, sizeof(said));
		snprintf(why, why_size, "the kernel refused to load the exec programs (%s%s)", strerror(-r), said);
		return r;
	}
	for (size_t i = 0; i < N_PROGRAMS; i++) {
		x->link[i] = bpf_program__attach(bpf_object__find_program_by_name(x->obj, program_names[i]));
		if (!x->link[i] && i == N_PROGRAMS - 1) {
			log_info("Execs are reported as they name the task, not as they begin: the kernel "
				 "refused to attach %s (%s)", program_names[i], strerror(errno));
			break;
		}
		if (!x->link[i]) {
			r = -errno;
			snprintf(why, why_size, "the kernel refused to attach %s (%s)", program_names[i], strerror(-r));
			return r;
		}
	}
	x->names = bpf_object__find_map_fd_by_name(x->obj, "names");
	x->settings = bpf_object__find_map_fd_by_name(x->obj, "settings");
	x->dropped = bpf_object__find_map_fd_by_name(x->obj, "dropped");
	x->ring = ring_buffer__new(bpf_object__find_map_fd_by_name(x->obj, "records"), on_record, x, NULL);
	if (x->names < 0 || x->settings < 0 || x->dropped < 0 || !x->ring) {
		snprintf(why, why_size, "the exec programs' maps are not there");
		return -ENOENT;
	}
	return map_arrays(x, why, why_size);
}

int execs_new(sd_event *e, execs_handler handler, void *userdata, struct execs **ret, char *why, size_t why_size) {
	struct execs *x = calloc(1, sizeof(*x));
	char *log = calloc(1, BPFLOG_SIZE);
	int r;

	*ret = NULL;
	if (!x || !log) {
		free(x);
		free(log);
		snprintf(why, why_size, "out of memory");
		return -ENOMEM;
	}
	x->handler = handler;
	x->userdata = userdata;
	x->event = e;
	x->known_words = procfs_pid_words();
	budget_init(&x->budget, EXECS_WINDOW_USEC, EXECS_SHARE_USEC);
	/* The task's pids in the records are the kernel's own. */
	if (procfs_pid_namespace() != 0) {
		snprintf(why, why_size, "ccxd is not in the initial PID namespace, whose numbers the kernel reports");
		r = -EOPNOTSUPP;
	} else
		r = load(x, log, why, why_size);
	free(log);
	if (r == 0) {
		r = sd_event_add_io(e, &x->io, ring_buffer__epoll_fd(x->ring), EPOLLIN, on_readable, x);
		if (r < 0)
			snprintf(why, why_size, "cannot watch the exec records (%s)", strerror(-r));
	}
	if (r < 0) {
		execs_free(x);
		return r;
	}
	*ret = x;
	return 0;
}

void execs_free(struct execs *x) {
	if (!x)
		return;
	sd_event_source_disable_unref(x->io);
	sd_event_source_disable_unref(x->resume);
	ring_buffer__free(x->ring);
	for (size_t i = 0; i < N_PROGRAMS; i++)
		bpf_link__destroy(x->link[i]);
	if (x->known)
		munmap(x->known, x->known_size);
	if (x->running)
		munmap((void *)x->running, x->running_size);
	if (x->pin)
		munmap(x->pin, x->pin_size);
	bpf_object__close(x->obj);
	free(x->set);
	free(x);
}

static void set_every(struct execs *x, bool every) {
	struct execs_settings s = { .every = every };
	__u32 zero = 0;

	if (bpf_map_update_elem(x->settings, &zero, &s, BPF_ANY) < 0) {
		/* Without it, a rule by exe or glob would miss its programs. */
		log_error_errno(-errno, "Failed to ask the kernel for every exec: %m");
		x->stats.full++;
		return;
	}
	x->every = every;
}

static int put_name(struct execs *x, const struct rules_name *n) {
	struct execs_name key = { .comm = "" };
	__u8 when = n->needs_cmdline ? EXECS_AT_END : EXECS_AT_RENAME;

	memcpy(key.comm, n->comm, strnlen(n->comm, sizeof(key.comm) - 1));
	return bpf_map_update_elem(x->names, &key, &when, BPF_ANY) < 0 ? -errno : 0;
}

static void drop_name(struct execs *x, const struct rules_name *n) {
	struct execs_name key = { .comm = "" };

	memcpy(key.comm, n->comm, strnlen(n->comm, sizeof(key.comm) - 1));
	bpf_map_delete_elem(x->names, &key);
}

void execs_set_rules(struct execs *x, const struct rule *rules, size_t n_rules) {
	struct rules_name *names;
	size_t n;
	bool every;

	if (rules_exec_names(rules, n_rules, &names, &n, &every) < 0) {
		log_error("Out of memory for the rules' names: every exec is looked at");
		set_every(x, true);
		return;
	}
	/* Every exec while the names change, so that none is missed between. */
	if (!x->every)
		set_every(x, true);
	for (size_t i = 0; i < x->n_set; i++)
		drop_name(x, &x->set[i]);
	for (size_t i = 0; i < n; i++) {
		int r = put_name(x, &names[i]);
		if (r < 0) {
			log_warning_errno(r, "The kernel's map cannot hold the rules' name %s: every exec is looked at: %m",
					  names[i].comm);
			x->stats.full++;
			every = true;
		}
	}
	free(x->set);
	x->set = names;
	x->n_set = n;
	x->rules_every = every;
	set_every(x, every || x->outside > 0);
}

void execs_track(struct execs *x, pid_t tgid, bool tracked) {
	__u32 word = (__u32)tgid / 64;
	__u64 bit = 1ULL << ((__u32)tgid % 64);

	if (tgid <= 0)
		return;
	if (word >= x->known_words) {
		/* pid_max was raised past the bitmap: while the table holds such
		 * a process, every exec is looked at, so that its own is not
		 * missed. */
		if (tracked ? x->outside++ == 0 : x->outside > 0 && --x->outside == 0)
			set_every(x, tracked || x->rules_every);
		return;
	}
	/* The programs only read the map: this is its one writer, and a
	 * word is read and written whole. */
	__atomic_store_n(&x->known[word], tracked ? x->known[word] | bit : x->known[word] & ~bit, __ATOMIC_RELEASE);
}

void execs_expect(struct execs *x, uint64_t pid_ino, uint64_t exec_ns, const cpu_set_t *cpus) {
	struct execs_pin *p = x->pin;

	/* Emptied while it changes: the programs match the inode first,
	 * then the rest. */
	__atomic_store_n(&p->pid_ino, 0, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	p->exec_ns = exec_ns;
	memcpy(p->mask, cpus, sizeof(p->mask));
	__atomic_store_n(&p->pid_ino, pid_ino, __ATOMIC_RELEASE);
}

/* The word of tgid's slot, where it tells of the exec of the process whose
 * pid has the inode pid_ino; 0 otherwise. The caller's pin came before. */
static uint64_t slot_word(const struct execs *x, pid_t tgid, uint64_t pid_ino) {
	uint64_t word;

	/* An exec done before the pin shows here as done. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	word = __atomic_load_n(&x->running[(__u32)tgid & (EXECS_RUNNING_SLOTS - 1)].word, __ATOMIC_ACQUIRE);
	return pid_ino && word >> EXECS_RUN_INO_SHIFT == pid_ino ? word : 0;
}

bool execs_pinned_first(struct execs *x, pid_t tgid, uint64_t pid_ino) {
	uint64_t state = slot_word(x, tgid, pid_ino) & EXECS_RUN_STATE;

	if (state != EXECS_RUN_UNDER_WAY && state != EXECS_RUN_HELD)
		return false;
	x->stats.pinned_first++;
	return true;
}

bool execs_left_out(const struct execs *x, pid_t tgid, uint64_t pid_ino) {
	return slot_word(x, tgid, pid_ino) & EXECS_RUN_LEFT_OUT;
}

uint64_t execs_dropped(struct execs *x) {
	__u32 zero = 0;
	__u64 n;

	if (bpf_map_lookup_elem(x->dropped, &zero, &n) < 0 || n <= x->stats.dropped)
		return 0;
	n -= x->stats.dropped;
	x->stats.dropped += n;
	return n;
}

void execs_catch_up(struct execs *x) {
	read_records(x, 0, util_usec(CLOCK_THREAD_CPUTIME_ID));
}

bool execs_read_some(struct execs *x, unsigned max, uint64_t cpu_usec) {
	return read_records(x, max, cpu_usec);
}

void execs_charge(struct execs *x, uint64_t cpu_usec) {
	budget_charge(&x->budget, util_usec(CLOCK_MONOTONIC), cpu_usec);
}

struct execs_stats execs_stats(const struct execs *x) {
	struct execs_stats st = x->stats;

	st.share_spent = x->budget.spent;
	return st;
}
