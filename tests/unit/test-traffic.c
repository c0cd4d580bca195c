/* The kernel's traffic counters on real processes: a writer and a reader
 * through a pipe, a Unix socketpair and a loopback TCP connection, each
 * counted exactly (100 messages of 1000 bytes written, the reader's reads
 * read) and both on the same queue; a process that holds both ends of a
 * pipe and only writes; a process that holds a channel and never uses it;
 * nothing new at a second read; no count lost between reads while data
 * flows; a read that does not wait for a grace period; and pids as a
 * container's ccxd numbers them; a thinned process counted one call in
 * 16. Skipped where BPF cannot be loaded. */
#include "test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "traffic.h"

#define MESSAGES 100
#define SIZE 1000

static struct traffic *load(void) {
	struct traffic *t;
	int r = traffic_new(true, &t);

	if (r < 0) {
		printf("# traffic_new: %s\n", strerror(-r));
		SKIP_TEST("no BPF tracing programs here (not root, or a kernel without BTF)");
	}
	if (traffic_note(t))
		printf("# %s\n", traffic_note(t));
	return t;
}

static struct traffic *load_pipes(void) {
	struct traffic *t = load();

	if (!traffic_counts_pipes(t)) {
		traffic_free(t);
		SKIP_TEST("pipes are not counted here (see the note above)");
	}
	return t;
}

static struct traffic *load_sockets(void) {
	struct traffic *t = load();

	if (!traffic_counts_sockets(t)) {
		traffic_free(t);
		SKIP_TEST("sockets are not counted here (see the note above)");
	}
	return t;
}

static uint64_t inode_of(int fd) {
	struct stat st;

	return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* What the reader read, and how many of its calls read a byte or more. */
struct reading {
	uint64_t bytes, reads;
};

struct exchange {
	pid_t writer, reader;
	struct reading read;
	bool written;              /* all MESSAGES of SIZE, each in one call */
};

/* A writer that writes MESSAGES messages of SIZE bytes into w (send(2) on a
 * socket) and a reader that reads r to its end (recv(2) on a socket),
 * counting its reads; both waited for, and w and r closed here. The writer
 * keeps r open when keep_r. */
static void exchange(int w, int r, bool sock, bool keep_r, struct exchange *ex) {
	int report[2];
	int status;

	memset(ex, 0, sizeof(*ex));
	if (pipe(report) < 0)
		return;
	ex->writer = fork();
	if (ex->writer == 0) {
		char buf[SIZE];
		int ok = 1;
		memset(buf, 'w', sizeof(buf));
		if (!keep_r)
			close(r);
		for (int i = 0; i < MESSAGES && ok; i++)
			ok = (sock ? send(w, buf, SIZE, 0) : write(w, buf, SIZE)) == SIZE;
		_exit(ok ? 0 : 1);
	}
	ex->reader = fork();
	if (ex->reader == 0) {
		struct reading got = { 0 };
		char buf[4096];
		ssize_t n;
		close(w);
		while ((n = sock ? recv(r, buf, sizeof(buf), 0) : read(r, buf, sizeof(buf))) > 0) {
			got.bytes += (uint64_t)n;
			got.reads++;
		}
		_exit(write(report[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	close(w);
	close(r);
	close(report[1]);
	if (read(report[0], &ex->read, sizeof(ex->read)) != sizeof(ex->read))
		memset(&ex->read, 0, sizeof(ex->read));
	close(report[0]);
	waitpid(ex->writer, &status, 0);
	ex->written = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	waitpid(ex->reader, NULL, 0);
}

static const struct traffic_entry *find(const struct traffic_entry *e, size_t n, enum traffic_kind kind,
					uint64_t queue, pid_t pid, enum traffic_direction direction) {
	const struct traffic_entry *hit = traffic_find(e, n, kind, queue, pid);

	for (; hit && hit < e + n && hit->queue == queue && hit->pid == pid; hit++)
		if (hit->direction == direction)
			return hit;
	return NULL;
}

/* The entry of pid's in direction, of kind, whatever its queue. */
static const struct traffic_entry *any(const struct traffic_entry *e, size_t n, enum traffic_kind kind, pid_t pid,
				       enum traffic_direction direction) {
	for (size_t i = 0; i < n; i++)
		if (e[i].kind == kind && e[i].pid == pid && e[i].direction == direction)
			return &e[i];
	return NULL;
}

static size_t entries_of(const struct traffic_entry *e, size_t n, enum traffic_kind kind, uint64_t queue) {
	size_t count = 0;

	for (size_t i = 0; i < n; i++)
		count += e[i].kind == kind && e[i].queue == queue;
	return count;
}

/* The writer's MESSAGES writes and the reader's reads, on the same queue
 * (queue, or, where 0, the one the writer's count names), and nothing
 * else on it. */
static void check_counted(const struct traffic_entry *e, size_t n, const struct exchange *ex, uint64_t queue,
			  enum traffic_kind kind) {
	const struct traffic_entry *w, *r;

	if (!queue && (w = any(e, n, kind, ex->writer, TRAFFIC_WRITE)))
		queue = w->queue;
	w = find(e, n, kind, queue, ex->writer, TRAFFIC_WRITE);
	r = find(e, n, kind, queue, ex->reader, TRAFFIC_READ);
	CHECK(ex->written);
	CHECK_INT(ex->read.bytes, MESSAGES * SIZE);
	printf("# writer %d: %llu bytes, %llu messages; reader %d: %llu bytes, %llu messages (%llu reads)\n",
	       ex->writer, w ? (unsigned long long)w->bytes : 0, w ? (unsigned long long)w->messages : 0, ex->reader,
	       r ? (unsigned long long)r->bytes : 0, r ? (unsigned long long)r->messages : 0,
	       (unsigned long long)ex->read.reads);
	CHECK(w && r);
	if (!w || !r)
		return;
	CHECK_INT(w->bytes, MESSAGES * SIZE);
	CHECK_INT(w->messages, MESSAGES);
	CHECK_INT(r->bytes, MESSAGES * SIZE);
	CHECK_INT(r->messages, ex->read.reads);
	/* Nobody else: not the test, which held both ends; not the writer
	 * reading nor the reader writing. */
	CHECK_INT(entries_of(e, n, kind, queue), 2);
}

/* A second read right after the first: nothing new of these processes. */
static void check_nothing_new(struct traffic *t, const struct exchange *ex) {
	struct traffic_entry *e;
	size_t n, count = 0;

	CHECK_INT(traffic_read(t, &e, &n), 0);
	for (size_t i = 0; i < n; i++)
		count += e[i].pid == ex->writer || e[i].pid == ex->reader;
	CHECK_INT(count, 0);
	free(e);
}

static void counts_a_pipe(void) {
	struct traffic *t = load_pipes();
	struct traffic_entry *e;
	struct exchange ex;
	uint64_t inode;
	size_t n;
	int p[2];

	CHECK_INT(pipe(p), 0);
	inode = inode_of(p[0]);
	CHECK_INT(traffic_read(t, &e, &n), 0);   /* what came before */
	free(e);
	exchange(p[1], p[0], false, false, &ex);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	check_counted(e, n, &ex, inode, TRAFFIC_PIPE);
	free(e);
	check_nothing_new(t, &ex);
	traffic_free(t);
}

/* A writer that holds the read end too, and never reads. */
static void credits_writes_only(void) {
	struct traffic *t = load_pipes();
	struct traffic_entry *e;
	struct exchange ex;
	uint64_t inode;
	size_t n;
	int p[2];

	CHECK_INT(pipe(p), 0);
	inode = inode_of(p[0]);
	exchange(p[1], p[0], false, true, &ex);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	check_counted(e, n, &ex, inode, TRAFFIC_PIPE);
	free(e);
	traffic_free(t);
}

static void counts_a_socketpair(void) {
	struct traffic *t = load_sockets();
	struct traffic_entry *e;
	struct exchange ex;
	uint64_t rin;
	size_t n;
	int sv[2];

	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	rin = inode_of(sv[1]);   /* the queue: the receiving end's */
	exchange(sv[0], sv[1], true, false, &ex);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	check_counted(e, n, &ex, rin, TRAFFIC_UNIX);
	free(e);
	check_nothing_new(t, &ex);
	traffic_free(t);
}

static void counts_a_tcp_connection(void) {
	struct traffic *t = load_sockets();
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	struct traffic_entry *e;
	struct exchange ex;
	int listener = socket(AF_INET, SOCK_STREAM, 0), client = socket(AF_INET, SOCK_STREAM, 0), server;
	size_t n;

	CHECK(listener >= 0 && client >= 0);
	CHECK_INT(bind(listener, (struct sockaddr *)&addr, sizeof(addr)), 0);
	CHECK_INT(listen(listener, 1), 0);
	CHECK_INT(getsockname(listener, (struct sockaddr *)&addr, &len), 0);
	CHECK_INT(connect(client, (struct sockaddr *)&addr, sizeof(addr)), 0);
	server = accept(listener, NULL, NULL);
	CHECK(server >= 0);
	close(listener);
	exchange(client, server, true, false, &ex);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	check_counted(e, n, &ex, 0, TRAFFIC_TCP);   /* the queue: a hash of both ends */
	free(e);
	check_nothing_new(t, &ex);
	traffic_free(t);
}

/* A writer into a pipe, a process that splices it into a second pipe to
 * its end, counting its calls, and a reader of the second: the splicer is
 * credited with reading the first and writing the second. */
static void counts_splice(void) {
	struct traffic *t = load_pipes();
	struct traffic_entry *e;
	struct exchange ex;
	uint64_t first, second;
	int a[2], b[2], report[2];
	struct reading spliced = { 0 };
	const struct traffic_entry *in, *out;
	pid_t splicer;
	size_t n;

	if (traffic_note(t) && strstr(traffic_note(t), "splice(2) into and out of pipes not counted"))
		SKIP_TEST("splice(2) is not counted here");
	CHECK_INT(pipe(a), 0);
	CHECK_INT(pipe(b), 0);
	CHECK_INT(pipe(report), 0);
	first = inode_of(a[0]);
	second = inode_of(b[0]);
	splicer = fork();
	if (splicer == 0) {
		ssize_t len;
		close(a[1]);
		close(b[0]);
		while ((len = splice(a[0], NULL, b[1], NULL, 4096, 0)) > 0) {
			spliced.bytes += (uint64_t)len;
			spliced.reads++;
		}
		_exit(write(report[1], &spliced, sizeof(spliced)) == sizeof(spliced) ? 0 : 1);
	}
	close(a[0]);
	close(b[1]);
	close(report[1]);
	exchange(a[1], b[0], false, false, &ex);   /* writes into the first, reads the second */
	CHECK_INT(read(report[0], &spliced, sizeof(spliced)), sizeof(spliced));
	waitpid(splicer, NULL, 0);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	in = find(e, n, TRAFFIC_PIPE, first, splicer, TRAFFIC_READ);
	out = find(e, n, TRAFFIC_PIPE, second, splicer, TRAFFIC_WRITE);
	printf("# splicer %d: %llu bytes in %llu splices\n", splicer, (unsigned long long)spliced.bytes,
	       (unsigned long long)spliced.reads);
	CHECK_INT(spliced.bytes, MESSAGES * SIZE);
	CHECK(in && out);
	CHECK_INT(in ? in->bytes : 0, MESSAGES * SIZE);
	CHECK_INT(in ? in->messages : 0, spliced.reads);
	CHECK_INT(out ? out->bytes : 0, MESSAGES * SIZE);
	CHECK_INT(out ? out->messages : 0, spliced.reads);
	CHECK(find(e, n, TRAFFIC_PIPE, first, ex.writer, TRAFFIC_WRITE) &&
	      find(e, n, TRAFFIC_PIPE, second, ex.reader, TRAFFIC_READ));
	CHECK_INT(entries_of(e, n, TRAFFIC_PIPE, first) + entries_of(e, n, TRAFFIC_PIPE, second), 4);
	free(e);
	traffic_free(t);
}

/* Reads while a writer writes and a reader reads: their sums over all the
 * reads are exact, none of their counts falls between two reads. */
static void loses_nothing_between_reads(void) {
	struct traffic *t = load_pipes();
	struct traffic_entry *e;
	uint64_t inode, written = 0, messages = 0, bytes_read = 0, reads = 0;
	int p[2];
	pid_t writer, reader;
	size_t n, rounds = 0;

	CHECK_INT(pipe(p), 0);
	inode = inode_of(p[0]);
	writer = fork();
	if (writer == 0) {
		char buf[64] = { 0 };
		close(p[0]);
		for (int i = 0; i < 200000; i++)
			if (write(p[1], buf, 1 + i % sizeof(buf)) <= 0)
				_exit(1);
		_exit(0);
	}
	reader = fork();
	if (reader == 0) {
		char buf[256];
		close(p[1]);
		while (read(p[0], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	close(p[1]);
	for (bool running = true; running; rounds++) {
		running = waitpid(reader, NULL, WNOHANG) == 0;
		CHECK_INT(traffic_read(t, &e, &n), 0);
		for (size_t i = 0; i < n; i++) {
			if (e[i].kind != TRAFFIC_PIPE || e[i].queue != inode)
				continue;
			if (e[i].pid == writer && e[i].direction == TRAFFIC_WRITE) {
				written += e[i].bytes;
				messages += e[i].messages;
			} else if (e[i].pid == reader && e[i].direction == TRAFFIC_READ) {
				bytes_read += e[i].bytes;
				reads += e[i].messages;
			} else {
				CHECK(!"an entry of another process or direction");
			}
		}
		free(e);
	}
	waitpid(writer, NULL, 0);
	printf("# %zu reads of the counts: %llu bytes in %llu messages written, %llu bytes in %llu read\n", rounds,
	       (unsigned long long)written, (unsigned long long)messages, (unsigned long long)bytes_read,
	       (unsigned long long)reads);
	CHECK(rounds > 2);
	CHECK_INT(messages, 200000);
	CHECK_INT(written, 200000 / 64 * (64 * 65 / 2));
	CHECK_INT(bytes_read, written);
	CHECK(reads > 0);
	CHECK_INT(traffic_lost(t), 0);
	traffic_free(t);
}

/* More channels between two reads than the map holds: those past it are
 * not counted, and said to be lost; the next read counts again. */
static void tells_what_was_lost(void) {
	struct traffic *t = load_pipes();
	struct traffic_entry *e;
	uint64_t lost, inode;
	size_t n, ours = 0;
	int triples = 16600;   /* a write and a read on each of 8300 pipes: more than TRAFFIC_ENTRIES */
	char c = 'x';
	int p[2];

	CHECK_INT(traffic_read(t, &e, &n), 0);
	free(e);
	lost = traffic_lost(t);
	for (int i = 0; i < triples / 2; i++) {
		CHECK_INT(pipe(p), 0);
		CHECK_INT(write(p[1], &c, 1), 1);
		CHECK_INT(read(p[0], &c, 1), 1);
		close(p[0]);
		close(p[1]);
	}
	CHECK_INT(traffic_read(t, &e, &n), 0);
	for (size_t i = 0; i < n; i++)
		ours += e[i].pid == getpid() && e[i].kind == TRAFFIC_PIPE;
	free(e);
	lost = traffic_lost(t) - lost;
	printf("# %zu entries of ours, %llu calls lost\n", ours, (unsigned long long)lost);
	CHECK(ours <= 16384);
	CHECK(lost > 0);
	CHECK(ours + lost >= (uint64_t)triples);
	/* Counted again. */
	CHECK_INT(pipe(p), 0);
	inode = inode_of(p[0]);
	CHECK_INT(write(p[1], &c, 1), 1);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	CHECK(find(e, n, TRAFFIC_PIPE, inode, getpid(), TRAFFIC_WRITE) != NULL);
	free(e);
	traffic_free(t);
}

/* The process outside the namespace (it unshares it: its children are
 * born in it), which writes into the pipe too; its exit status: 0, 1 when
 * a check failed, 77 when the namespace or the counters are not there. */
static void outside_a_container(void) {
	int p[2], go[2], ready[2], status;
	pid_t inside;

	if (pipe(p) < 0 || pipe(go) < 0 || pipe(ready) < 0 || unshare(CLONE_NEWPID) < 0)
		_exit(77);
	/* Room for all that is written before it is read. */
	CHECK(fcntl(p[1], F_SETPIPE_SZ, 256 * 1024) >= (MESSAGES + 10) * SIZE);
	inside = fork();
	if (inside == 0) {   /* pid 1 of the namespace: ccxd */
		struct traffic *t;
		struct traffic_entry *e;
		const struct traffic_entry *w, *r;
		uint64_t inode = inode_of(p[0]), got = 0;
		char buf[SIZE];
		ssize_t len;
		pid_t writer;
		size_t n;

		if (traffic_new(true, &t) < 0 || !traffic_counts_pipes(t))
			_exit(77);
		writer = fork();   /* pid 2 */
		if (writer == 0) {
			memset(buf, 'w', sizeof(buf));
			for (int i = 0; i < MESSAGES; i++)
				if (write(p[1], buf, SIZE) != SIZE)
					_exit(1);
			_exit(0);
		}
		waitpid(writer, NULL, 0);
		if (write(ready[1], "x", 1) != 1 || read(go[0], buf, 1) != 1)   /* the outside writes */
			_exit(1);
		close(p[1]);
		while ((len = read(p[0], buf, sizeof(buf))) > 0)
			got += (uint64_t)len;
		CHECK_INT(got, (MESSAGES + 10) * SIZE);
		CHECK_INT(getpid(), 1);
		CHECK_INT(writer, 2);
		CHECK_INT(traffic_read(t, &e, &n), 0);
		w = find(e, n, TRAFFIC_PIPE, inode, writer, TRAFFIC_WRITE);
		r = find(e, n, TRAFFIC_PIPE, inode, 1, TRAFFIC_READ);
		CHECK(w && r);
		CHECK_INT(w ? w->bytes : 0, MESSAGES * SIZE);
		CHECK_INT(r ? r->bytes : 0, (MESSAGES + 10) * SIZE);
		CHECK_INT(entries_of(e, n, TRAFFIC_PIPE, inode), 2);   /* not the process outside */
		free(e);
		traffic_free(t);
		/* Not test_exit(): LeakSanitizer finds its threads through
		 * /proc/PID/task, which shows the host's numbers, not these. */
		fflush(stdout);
		_exit(test_failed);
	}
	CHECK(inside > 0);
	close(p[0]);
	close(ready[1]);   /* so that its end reads 0 if it skips */
	close(go[0]);
	if (read(ready[0], &status, 1) == 1) {
		char buf[SIZE] = { 0 };
		for (int i = 0; i < 10; i++)
			CHECK_INT(write(p[1], buf, SIZE), SIZE);
	}
	close(p[1]);
	CHECK_INT(write(go[1], "x", 1), 1);
	waitpid(inside, &status, 0);
	fflush(stdout);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		_exit(77);
	_exit(test_failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0);
}

/* ccxd in a pid namespace of its own: the pids it is given are the ones it
 * sees; a process outside its namespace is not counted. In a child: a
 * process that unshared its pid namespace cannot fork again once that
 * namespace's first process is gone. */
static void numbers_pids_as_a_container_does(void) {
	pid_t outside = fork();
	int status;

	if (outside == 0)
		outside_a_container();
	CHECK(outside > 0);
	waitpid(outside, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		SKIP_TEST("no pid namespace of its own, or pipes not counted here");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A client that sends a request of 100 bytes and reads a reply of 1000,
 * ROUNDS times, each time over a new loopback TCP connection to a server
 * in another process (IPv4 to an IPv6 dual-stack listener, so that the two
 * ends name their addresses differently): each direction of each
 * connection is a queue that its writer and its reader name alike, though
 * every socket is gone by the time the counts are read. */
#define ROUNDS 20

static void names_both_ends_of_short_connections(void) {
	struct traffic *t = load_sockets();
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	socklen_t len = sizeof(addr);
	int listener = socket(AF_INET6, SOCK_STREAM, 0), off = 0, status;
	struct traffic_entry *e;
	uint64_t requests = 0, replies = 0;
	pid_t server, client;
	size_t n, queues = 0;

	CHECK(listener >= 0);
	if (setsockopt(listener, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0 ||
	    bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		close(listener);
		traffic_free(t);
		SKIP_TEST("no dual-stack IPv6 socket here");
	}
	CHECK_INT(listen(listener, ROUNDS), 0);
	CHECK_INT(getsockname(listener, (struct sockaddr *)&addr, &len), 0);
	server = fork();
	if (server == 0) {
		char buf[1000] = { 0 };
		for (int i = 0; i < ROUNDS; i++) {
			int c = accept(listener, NULL, NULL);
			if (c < 0 || recv(c, buf, 100, MSG_WAITALL) != 100 || send(c, buf, sizeof(buf), 0) != sizeof(buf))
				_exit(1);
			close(c);
		}
		_exit(0);
	}
	client = fork();
	if (client == 0) {
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = addr.sin6_port,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		char buf[1000] = { 0 };
		for (int i = 0; i < ROUNDS; i++) {
			int c = socket(AF_INET, SOCK_STREAM, 0);
			if (c < 0 || connect(c, (struct sockaddr *)&to, sizeof(to)) < 0 || send(c, buf, 100, 0) != 100 ||
			    recv(c, buf, sizeof(buf), MSG_WAITALL) != sizeof(buf))
				_exit(1);
			close(c);
		}
		_exit(0);
	}
	close(listener);
	waitpid(client, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	waitpid(server, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	for (size_t i = 0; i < n; i++) {
		const struct traffic_entry *peer;
		if (e[i].kind != TRAFFIC_TCP || e[i].direction != TRAFFIC_WRITE ||
		    (e[i].pid != client && e[i].pid != server))
			continue;
		queues++;
		peer = find(e, n, TRAFFIC_TCP, e[i].queue, e[i].pid == client ? server : client, TRAFFIC_READ);
		CHECK(peer != NULL);
		CHECK_INT(e[i].messages, 1);
		CHECK_INT(peer ? peer->bytes : 0, e[i].bytes);
		if (e[i].pid == client)
			requests += e[i].bytes;
		else
			replies += e[i].bytes;
	}
	printf("# %zu queues: %llu bytes of requests, %llu of replies\n", queues, (unsigned long long)requests,
	       (unsigned long long)replies);
	CHECK_INT(queues, 2 * ROUNDS);
	CHECK_INT(requests, ROUNDS * 100);
	CHECK_INT(replies, ROUNDS * 1000);
	free(e);
	traffic_free(t);
}

/* This process sends calls messages of SIZE bytes through a Unix
 * socketpair to a child that reads them all; the queue (the receiving
 * end's inode), and the child's pid. */
static uint64_t send_to_a_reader(int calls, pid_t *reader) {
	char buf[SIZE];
	uint64_t queue;
	int sv[2];

	memset(buf, 's', sizeof(buf));
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
		return 0;
	queue = inode_of(sv[1]);
	*reader = fork();
	if (*reader == 0) {
		close(sv[0]);
		while (recv(sv[1], buf, sizeof(buf), 0) > 0)
			;
		_exit(0);
	}
	close(sv[1]);
	for (int i = 0; i < calls && *reader > 0; i++)
		if (send(sv[0], buf, SIZE, 0) != SIZE)
			break;
	close(sv[0]);
	if (*reader > 0)
		waitpid(*reader, NULL, 0);
	return queue;
}

/* A thinned process is counted one call in TRAFFIC_THIN_EVERY, each
 * standing for that many: its total stays an estimate of what it sent
 * (16,000 calls: about 1,000 counted, within 25 % of the truth but for 1 in
 * 10^13), while its peer, not thinned, is counted exactly; and exactly
 * again once no longer thinned. */
static void thins_a_process(void) {
	struct traffic *t = load_sockets();
	const struct traffic_entry *w;
	struct traffic_entry *e;
	uint64_t queue;
	pid_t reader;
	size_t n;

	CHECK_INT(traffic_thin(t, 0, true), -ERANGE);
	CHECK_INT(traffic_thin(t, 1 << 30, true), -ERANGE);
	CHECK_INT(traffic_thin(t, getpid(), true), 0);
	CHECK_INT(traffic_read(t, &e, &n), 0);   /* what came before */
	free(e);
	queue = send_to_a_reader(16000, &reader);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	w = find(e, n, TRAFFIC_UNIX, queue, getpid(), TRAFFIC_WRITE);
	CHECK(w != NULL);
	if (w) {
		printf("# thinned: %llu calls counted as %llu, %llu bytes\n", (unsigned long long)w->messages / 16,
		       (unsigned long long)w->messages, (unsigned long long)w->bytes);
		CHECK_INT(w->messages % 16, 0);
		CHECK_INT(w->bytes, w->messages * SIZE);
		CHECK(w->messages >= 12000 && w->messages <= 20000);
	}
	w = find(e, n, TRAFFIC_UNIX, queue, reader, TRAFFIC_READ);
	CHECK(w && w->bytes == 16000ULL * SIZE);
	free(e);

	CHECK_INT(traffic_thin(t, getpid(), false), 0);
	queue = send_to_a_reader(MESSAGES, &reader);
	CHECK_INT(traffic_read(t, &e, &n), 0);
	w = find(e, n, TRAFFIC_UNIX, queue, getpid(), TRAFFIC_WRITE);
	CHECK(w && w->messages == MESSAGES && w->bytes == MESSAGES * SIZE);
	free(e);
	traffic_free(t);
}

/* The note names each part that is not counted, and says nothing when all
 * are: with the system-call program and without it (which on a kernel
 * that refuses fexit leaves pipes uncounted, and says so). */
static void tells_what_is_counted(void) {
	for (int syscalls = 0; syscalls < 2; syscalls++) {
		struct traffic *t;
		const char *note;

		if (traffic_new(syscalls, &t) < 0)
			SKIP_TEST("no BPF tracing programs here (not root, or a kernel without BTF)");
		note = traffic_note(t);
		printf("# %s: pipes %s, sockets %s; %s\n", syscalls ? "with system calls" : "without",
		       traffic_counts_pipes(t) ? "counted" : "not counted",
		       traffic_counts_sockets(t) ? "counted" : "not counted", note ? note : "no note");
		/* The pipes' part comes first in the note; splice's, which is
		 * about pipes too, later. */
		CHECK(traffic_counts_pipes(t) == !(note && strncmp(note, "pipes not counted", 17) == 0));
		CHECK(traffic_counts_sockets(t) == !(note && strstr(note, "sockets not counted")));
		/* All counted: only how pipes are (splice, the system calls'
		 * exit) may be said. */
		if (note && traffic_counts_pipes(t) && traffic_counts_sockets(t))
			CHECK(strstr(note, "splice") || strstr(note, "system calls' exit"));
		traffic_free(t);
	}
}

TEST_MAIN(T(tells_what_is_counted), T(counts_a_pipe), T(credits_writes_only), T(counts_a_socketpair),
	  T(counts_a_tcp_connection), T(names_both_ends_of_short_connections),
	  T(counts_splice), T(loses_nothing_between_reads),
	  T(tells_what_was_lost), T(numbers_pids_as_a_container_does), T(thins_a_process))
