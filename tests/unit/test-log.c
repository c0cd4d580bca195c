#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "test.h"

/* ---- the native protocol ---- */

static void formats_plain_fields_one_per_line(void) {
	const char *fields[] = { "CCXD_PID=42", "CCXD_COMM=x265", NULL };
	char buf[512];
	ssize_t n = log_journal_format(buf, sizeof(buf), LOG_INFO, "ccxd", 0, fields, "Pinned x265[42]");

	CHECK(n > 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	CHECK_STR(buf, "PRIORITY=6\nSYSLOG_IDENTIFIER=ccxd\nCCXD_PID=42\nCCXD_COMM=x265\nMESSAGE=Pinned x265[42]\n");
}

static void adds_errno_only_for_errors(void) {
	char buf[512];
	ssize_t n = log_journal_format(buf, sizeof(buf), LOG_ERR, "ccxd", ENOENT, NULL, "gone");

	CHECK(n > 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	CHECK_STR(buf, "PRIORITY=3\nSYSLOG_IDENTIFIER=ccxd\nERRNO=2\nMESSAGE=gone\n");
}

static void length_prefixes_values_with_newlines(void) {
	static const char want[] = "PRIORITY=4\nSYSLOG_IDENTIFIER=ccxd\nMESSAGE\n\x03\0\0\0\0\0\0\0a\nb\n";
	char buf[512];
	ssize_t n = log_journal_format(buf, sizeof(buf), LOG_WARNING, "ccxd", 0, NULL, "a\nb");

	CHECK_INT(n, sizeof(want) - 1);
	CHECK(n == (ssize_t)sizeof(want) - 1 && memcmp(buf, want, sizeof(want) - 1) == 0);
}

static void leaves_out_fields_journald_would_reject(void) {
	const char *fields[] = { "lower=x", "_TRUSTED=x", "1DIGIT=x", "NO_EQUALS", "=x", "BAD-DASH=x", "GOOD_1=y",
				 NULL };
	char buf[512];
	ssize_t n = log_journal_format(buf, sizeof(buf), LOG_INFO, "ccxd", 0, fields, "m");

	CHECK(n > 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	CHECK_STR(buf, "PRIORITY=6\nSYSLOG_IDENTIFIER=ccxd\nGOOD_1=y\nMESSAGE=m\n");
}

static void reports_a_buffer_too_small(void) {
	char buf[20];

	CHECK_INT(log_journal_format(buf, sizeof(buf), LOG_INFO, "ccxd", 0, NULL, "a message"), -ENOBUFS);
}

/* ---- sending ---- */

/* A datagram socket standing in for journald, bound at a fresh path. */
static int fake_journal(char *path, size_t size) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *dir = getenv("TMPDIR");
	int fd;

	snprintf(path, size, "%s/ccxd-test-log-%d", dir && *dir ? dir : "/tmp", (int)getpid());
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("fake journal");
		abort();
	}
	return fd;
}

static ssize_t receive(int fd, char *buf, size_t size) {
	ssize_t n = recv(fd, buf, size - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return n;
}

static void decision_fields_reach_the_journal(void) {
	char path[108], buf[4096];
	int fd = fake_journal(path, sizeof(path));

	CHECK_INT(log_open_journal(path), 0);
	log_decision(LOG_INFO, &(struct log_decision) { .pid = 42, .comm = "x265", .ccx = "1", .rule = "enc",
							 .decision = "pin" },
		     "Pinned %s[%d]", "x265", 42);
	CHECK(receive(fd, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\nCCXD_PID=42\n") != NULL);
	CHECK(strstr(buf, "\nCCXD_COMM=x265\n") != NULL);
	CHECK(strstr(buf, "\nCCXD_CCX=1\n") != NULL);
	CHECK(strstr(buf, "\nCCXD_RULE=enc\n") != NULL);
	CHECK(strstr(buf, "\nCCXD_DECISION=pin\n") != NULL);
	CHECK(strstr(buf, "CCXD_GROUP") == NULL);   /* none was given */
	CHECK(strstr(buf, "\nMESSAGE=Pinned x265[42]\n") != NULL);
	unlink(path);
}

static void levels_below_the_maximum_are_not_sent(void) {
	char path[108], buf[4096];
	int fd = fake_journal(path, sizeof(path));

	CHECK_INT(log_open_journal(path), 0);
	log_set_max_level(LOG_INFO);
	log_debug("not this one");
	log_info("this one");
	CHECK(receive(fd, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "MESSAGE=this one") != NULL);
	CHECK(receive(fd, buf, sizeof(buf)) < 0);
	log_set_max_level(LOG_DEBUG);
	log_debug("now this one");
	CHECK(receive(fd, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "PRIORITY=7\n") != NULL);
	unlink(path);
}

static void a_full_journal_drops_and_counts_instead_of_blocking(void) {
	char path[108], buf[4096];
	int fd = fake_journal(path, sizeof(path));
	size_t queued = 0;

	CHECK_INT(log_open_journal(path), 0);
	/* A blocking send would hang here: the alarm turns that into a failure. */
	alarm(10);
	for (int i = 0; i < 200; i++)
		log_info("message %d", i);
	alarm(0);
	CHECK(log_dropped() > 0);
	while (receive(fd, buf, sizeof(buf)) > 0)
		queued++;
	CHECK_INT(queued + log_dropped(), 200);

	/* With room again the next message goes through, followed by word of
	 * what was lost. */
	log_info("after");
	CHECK(receive(fd, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "MESSAGE=after") != NULL);
	CHECK(receive(fd, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "MESSAGE=Dropped ") != NULL);
	CHECK(strstr(buf, "PRIORITY=4\n") != NULL);
	unlink(path);
}

static void without_a_journal_messages_go_to_stderr(void) {
	char out[] = "/tmp/ccxd-test-log-stderr-XXXXXX", buf[512] = "";
	int fd = mkstemp(out);
	ssize_t n;

	CHECK(fd >= 0);
	CHECK_INT(log_open_journal("/nonexistent/journal/socket"), -ENOENT);
	dup2(fd, 2);
	log_set_ident("ccxd");
	log_warning("plain %s", "text");
	log_error_errno(-EACCES, "Failed: %m");
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK_STR(buf, "ccxd: warning: plain text\nccxd: error: Failed: Permission denied\n");
	unlink(out);
}

static void returns_the_error_it_was_given(void) {
	int fd = open("/dev/null", O_WRONLY);

	dup2(fd, 2);
	CHECK_INT(log_error_errno(-EINVAL, "x"), -EINVAL);
	CHECK_INT(log_debug_errno(-ESRCH, "x"), -ESRCH);
}

/* A pin at each of a flood's execs: ten lines, then one that sums up. */
static void a_flood_of_lines_is_summed_up(void) {
	struct log_ratelimit rl = { .interval_usec = 10000000, .burst = 10 };
	unsigned passed = 0;

	for (uint64_t t = 1000000; t < 1000000 + 5000000; t += 1000)   /* 5,000 lines in 5 s */
		passed += log_ratelimit_pass(&rl, t);
	CHECK_INT(passed, 10);
	CHECK_INT(log_ratelimit_held(&rl, 6000000), 0);      /* the interval is not over */
	CHECK_INT(log_ratelimit_held(&rl, 11000000), 4990);
	CHECK_INT(log_ratelimit_held(&rl, 11000001), 0);     /* said once */
	CHECK(log_ratelimit_pass(&rl, 11000002));             /* a new interval */
}

static void lines_after_the_interval_wait_for_the_sum(void) {
	struct log_ratelimit rl = { .interval_usec = 1000, .burst = 1 };

	CHECK(log_ratelimit_pass(&rl, 5000));
	CHECK(!log_ratelimit_pass(&rl, 5100));
	/* Over, but the held line is not said yet: this one is held too, so
	 * that the sum comes before the lines after it. */
	CHECK(!log_ratelimit_pass(&rl, 7000));
	CHECK_INT(log_ratelimit_held(&rl, 7001), 2);
	CHECK(log_ratelimit_pass(&rl, 7002));
}

static void few_lines_all_pass(void) {
	struct log_ratelimit rl = { .interval_usec = 1000, .burst = 2 };

	for (uint64_t t = 10000; t < 20000; t += 600)
		CHECK(log_ratelimit_pass(&rl, t));
	CHECK_INT(log_ratelimit_held(&rl, 30000), 0);
}

TEST_MAIN(
	T(formats_plain_fields_one_per_line),
	T(adds_errno_only_for_errors),
	T(length_prefixes_values_with_newlines),
	T(leaves_out_fields_journald_would_reject),
	T(reports_a_buffer_too_small),
	T(decision_fields_reach_the_journal),
	T(levels_below_the_maximum_are_not_sent),
	T(a_full_journal_drops_and_counts_instead_of_blocking),
	T(without_a_journal_messages_go_to_stderr),
	T(returns_the_error_it_was_given),
	T(a_flood_of_lines_is_summed_up),
	T(lines_after_the_interval_wait_for_the_sum),
	T(few_lines_all_pass)
)
