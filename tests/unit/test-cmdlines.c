/* Command lines read off the event loop, from a fixture /proc whose
 * cmdline files are FIFOs where a read must block: a real blocking read,
 * in a real thread, under a real sd-event loop. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmdlines.h"
#include "fixture.h"
#include "test.h"
#include "util.h"

#define NOBODY 65534

static struct cmdlines *c;
static char got[4][64];          /* by pid - 100: what the ready callback read */
static int got_r[4];
static unsigned readied;

static void on_ready(void *userdata, pid_t pid, int tag) {
	char *text = NULL;
	int r = cmdlines_get(c, pid, 7, NOBODY, tag, &text);

	(void)userdata;
	CHECK_INT(tag, 42);
	got_r[pid - 100] = r;
	if (r == 0)
		snprintf(got[pid - 100], sizeof(got[0]), "%s", text);
	free(text);
	readied++;
}

/* A process directory owned by uid, with its cmdline: a file of text, or a
 * FIFO (text NULL), whose open waits for a writer. */
static void process(const char *root, pid_t pid, uid_t uid, const char *text, size_t len) {
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
	CHECK_INT(mkdir(path, 0555), 0);
	CHECK_INT(chown(path, uid, 0), 0);
	snprintf(path, sizeof(path), "%s/proc/%d/cmdline", root, (int)pid);
	if (!text) {
		CHECK_INT(mkfifo(path, 0600), 0);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT, 0444);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, text, len), (long long)len);
	close(fd);
}

static void run_until(sd_event *e, unsigned readied_at_least, uint64_t usec) {
	uint64_t end = util_usec(CLOCK_MONOTONIC) + usec;

	while (readied < readied_at_least && util_usec(CLOCK_MONOTONIC) < end)
		sd_event_run(e, 10000);
}

/* The writer a FIFO's reader waits for: what it reads, then the end. */
static void answer(const char *root, pid_t pid, const char *text, size_t len) {
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/proc/%d/cmdline", root, (int)pid);
	/* Without a reader yet (its thread not started), ENXIO: again. */
	for (int i = 0; (fd = open(path, O_WRONLY | O_NONBLOCK)) < 0 && errno == ENXIO && i < 200; i++)
		usleep(10000);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, text, len), (long long)len);
	close(fd);
}

static void a_read_that_blocks_holds_up_nothing_but_its_user(void) {
	char root[PATH_MAX], proc[PATH_MAX + 8], *text = NULL;
	struct cmdlines_stats st;
	sd_event *e;

	if (geteuid() != 0)
		SKIP_TEST("needs root, to own the fixture's processes as another user");
	fixture_root(root);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	CHECK_INT(mkdir(proc, 0755), 0);
	process(root, 100, NOBODY, NULL, 0);              /* nobody's: blocks */
	process(root, 101, 0, "a\0b\0", 4);                /* root's */
	process(root, 102, NOBODY, "z\0", 2);              /* nobody's other */
	CHECK_INT(sd_event_new(&e), 0);
	CHECK_INT(cmdlines_new(e, root, on_ready, NULL, &c), 0);

	CHECK_INT(cmdlines_get(c, 100, 7, NOBODY, 42, &text), -EINPROGRESS);
	CHECK_INT(cmdlines_get(c, 100, 7, NOBODY, 42, &text), -EINPROGRESS);   /* asked once */
	CHECK_INT(cmdlines_get(c, 101, 7, 0, 42, &text), -EINPROGRESS);
	run_until(e, 1, 2000000);
	CHECK_INT(readied, 1);
	CHECK_INT(got_r[1], 0);
	CHECK_STR(got[1], "a b");

	/* Past CMDLINES_SLOW_USEC, nobody's read blocks: their next is not made. */
	run_until(e, 2, CMDLINES_SLOW_USEC + 50000);
	st = cmdlines_stats(c);
	CHECK_INT(st.blocked, 1);
	CHECK_INT(cmdlines_get(c, 102, 7, NOBODY, 42, &text), -EBUSY);
	CHECK_INT(cmdlines_stats(c).refused, 1);

	/* It returns once its file answers, and nobody's reads go on. */
	answer(root, 100, "x\0y\0", 4);
	run_until(e, 2, 2000000);
	CHECK_INT(readied, 2);
	CHECK_STR(got[0], "x y");
	st = cmdlines_stats(c);
	CHECK_INT(st.blocked, 0);
	CHECK_INT(st.read, 2);
	CHECK_INT(cmdlines_get(c, 102, 7, NOBODY, 42, &text), -EINPROGRESS);
	run_until(e, 3, 2000000);
	CHECK_STR(got[2], "z");

	/* Freed while a read blocks: the thread finishes on its own once its
	 * file answers. */
	process(root, 103, NOBODY, NULL, 0);
	CHECK_INT(cmdlines_get(c, 103, 7, NOBODY, 42, &text), -EINPROGRESS);
	cmdlines_free(c);
	answer(root, 103, "w\0", 2);
	usleep(20000);
	sd_event_unref(e);
	fixture_remove(root);
}

TEST_MAIN(T(a_read_that_blocks_holds_up_nothing_but_its_user))
