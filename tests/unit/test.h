/* A small unit-test harness: each test runs in its own child process, so a
 * crash is one failed test rather than a lost run. Output is TAP-style lines
 * that tests/run counts. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Built with AddressSanitizer (gcc says so with a macro, clang with a feature test)? */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_LEAK_CHECK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_LEAK_CHECK 1
#endif
#endif
#ifdef TEST_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

struct test {
	const char *name;
	void (*fn)(void);
};

static int test_failed;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stdout, "# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		test_failed = 1; \
	} \
} while (0)

#define CHECK_INT(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { \
		fprintf(stdout, "# %s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); \
		test_failed = 1; \
	} \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *_a = (a), *_b = (b); \
	if (!_a || !_b || strcmp(_a, _b) != 0) { \
		fprintf(stdout, "# %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
			_a ? _a : "(null)", _b ? _b : "(null)"); \
		test_failed = 1; \
	} \
} while (0)

/* Skip the current test (prints the reason) */
#define SKIP_TEST(why) do { printf("# SKIP %s\n", why); fflush(stdout); _exit(77); } while (0)

/* Ends a test's child. _exit() skips LeakSanitizer's check at exit, so it is
 * run here: a test that leaks fails, with the report. */
static inline void test_exit(int status) {
#ifdef TEST_LEAK_CHECK
	if (__lsan_do_recoverable_leak_check()) {
		printf("# memory leaked (LeakSanitizer report above or in its log_path)\n");
		status = 1;
	}
#endif
	fflush(stdout);
	_exit(status);
}

static inline int test_run_all(const struct test *tests, size_t n) {
	int failures = 0;

	for (size_t i = 0; i < n; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			tests[i].fn();
			fflush(stdout);
			test_exit(test_failed ? 1 : 0);
		}
		int status;
		if (waitpid(pid, &status, 0) < 0) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			printf("ok - %s # SKIP\n", tests[i].name);
		else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			printf("ok - %s\n", tests[i].name);
		else {
			if (WIFSIGNALED(status))
				printf("# killed by signal %d\n", WTERMSIG(status));
			printf("not ok - %s\n", tests[i].name);
			failures++;
		}
	}
	return failures ? 1 : 0;
}

#define TEST_MAIN(...) \
	int main(void) { \
		static const struct test tests[] = { __VA_ARGS__ }; \
		return test_run_all(tests, sizeof(tests) / sizeof(tests[0])); \
	}

#define T(fn) { #fn, fn }
