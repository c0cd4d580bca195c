/* ccxt-hostile MODE SOCKET [ARGS]: a control client that misbehaves, for
 * tests/integration/test-hostile.sh. Prints one line saying what the daemon
 * did to it.
 *   idle SOCKET N SECONDS   opens N connections, sends nothing, holds them
 *                           SECONDS; prints how many connected and how many
 *                           the daemon closed meanwhile
 *   flood SOCKET N SECONDS  one connection: sends N calls and never reads a
 *                           reply; prints "dropped after S s" or "open"
 *   half SOCKET SECONDS     sends the start of a message and nothing more;
 *                           prints "dropped after S s" or "open"
 *   oneway SOCKET SECONDS   one connection: sends one-way status calls as
 *                           fast as they are taken; prints "sent N"
 *   reconnect SOCKET SECONDS  connects again and again, each time sending
 *                           one-way status calls as fast as they are taken
 *                           for 20 ms, then closing; prints "connections N"
 *   trickle SOCKET SECONDS  sends up to 1000 status calls at once and reads
 *                           the replies one byte every 10 ms; prints how
 *                           many it sent, "dropped after S s" or "open" */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int connect_to(const char *path) {
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static double now(void) {
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Whether the daemon hung up on fd: POLLRDHUP shows it even while unread
 * replies sit in front of the end of the stream. */
static int hung_up(int fd, int timeout_ms) {
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return poll(&p, 1, timeout_ms) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/* Waits up to seconds for the daemon to hang up; prints what happened. */
static int wait_dropped(int fd, double start, double seconds) {
	while (now() - start < seconds) {
		if (hung_up(fd, 50)) {
			printf("dropped after %.1f s\n", now() - start);
			return 0;
		}
	}
	printf("open\n");
	return 0;
}

static int idle(const char *path, int n, double seconds) {
	int *fds = calloc((size_t)n, sizeof(*fds)), connected = 0, closed = 0;
	double start = now();

	if (!fds)
		return 1;
	for (int i = 0; i < n; i++) {
		fds[i] = connect_to(path);
		connected += fds[i] >= 0;
	}
	while (now() - start < seconds)
		usleep(50 * 1000);
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0) {
			closed += hung_up(fds[i], 0);
			close(fds[i]);
		}
	printf("connected %d closed %d\n", connected, closed);
	free(fds);
	return 0;
}

static int flood(const char *path, int n, double seconds) {
	static const char call[] = "{\"method\":\"io.ccxd.GetTopology\"}";
	int fd = connect_to(path), sent = 0;
	double start = now();

	if (fd < 0)
		return 1;
	/* Non-blocking: once the daemon stops reading, the rest does not fit. */
	for (int i = 0; i < n && now() - start < seconds; i++) {
		if (send(fd, call, sizeof(call), MSG_NOSIGNAL) != (ssize_t)sizeof(call)) {
			if (errno != EAGAIN)
				break;
			usleep(1000);
			continue;
		}
		sent++;
	}
	fprintf(stderr, "ccxt-hostile: sent %d calls\n", sent);
	return wait_dropped(fd, start, seconds);
}

static int oneway(const char *path, double seconds) {
	static const char call[] = "{\"method\":\"io.ccxd.GetStatus\",\"oneway\":true}";
	int fd = connect_to(path);
	long sent = 0;
	double start = now();

	if (fd < 0)
		return 1;
	while (now() - start < seconds) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		if (poll(&p, 1, 100) <= 0 || (p.revents & (POLLHUP | POLLERR)))
			continue;
		if (send(fd, call, sizeof(call), MSG_NOSIGNAL) == (ssize_t)sizeof(call))
			sent++;
		else if (errno != EAGAIN)
			break;
	}
	printf("sent %ld\n", sent);
	return 0;
}

static int reconnect(const char *path, double seconds) {
	static const char call[] = "{\"method\":\"io.ccxd.GetStatus\",\"oneway\":true}";
	double start = now();
	long connections = 0;

	while (now() - start < seconds) {
		int fd = connect_to(path);
		double began = now();

		if (fd < 0) {
			usleep(1000);
			continue;
		}
		connections++;
		while (now() - began < 0.02) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			if (poll(&p, 1, 5) <= 0 || (p.revents & (POLLHUP | POLLERR)))
				continue;
			if (send(fd, call, sizeof(call), MSG_NOSIGNAL) != (ssize_t)sizeof(call) && errno != EAGAIN)
				break;
		}
		close(fd);
	}
	printf("connections %ld\n", connections);
	return 0;
}

static int trickle(const char *path, double seconds) {
	static const char call[] = "{\"method\":\"io.ccxd.GetStatus\"}";
	int fd = connect_to(path), sent = 0;
	double start = now();
	char c;

	if (fd < 0)
		return 1;
	while (sent < 1000 && send(fd, call, sizeof(call), MSG_NOSIGNAL) == (ssize_t)sizeof(call))
		sent++;
	while (now() - start < seconds) {
		ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			printf("sent %d, dropped after %.1f s\n", sent, now() - start);
			return 0;
		}
		usleep(10 * 1000);
	}
	printf("sent %d, open\n", sent);
	return 0;
}

static int half(const char *path, double seconds) {
	static const char part[] = "{\"method\":\"io.ccxd.GetVer";
	int fd = connect_to(path);
	double start = now();

	if (fd < 0 || send(fd, part, sizeof(part) - 1, MSG_NOSIGNAL) < 0)
		return 1;
	return wait_dropped(fd, start, seconds);
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "idle") == 0)
		return idle(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc == 5 && strcmp(argv[1], "flood") == 0)
		return flood(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc == 4 && strcmp(argv[1], "half") == 0)
		return half(argv[2], atof(argv[3]));
	if (argc == 4 && strcmp(argv[1], "oneway") == 0)
		return oneway(argv[2], atof(argv[3]));
	if (argc == 4 && strcmp(argv[1], "reconnect") == 0)
		return reconnect(argv[2], atof(argv[3]));
	if (argc == 4 && strcmp(argv[1], "trickle") == 0)
		return trickle(argv[2], atof(argv[3]));
	fprintf(stderr, "Usage: ccxt-hostile idle|flood SOCKET N SECONDS | half|oneway|reconnect|trickle SOCKET SECONDS\n");
	return 2;
}
