#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cpulist.h"
#include "ledger.h"
#include "test.h"

static struct ledger_entry entry(pid_t pid, enum ledger_owner owner, const char *original, const char *cpus) {
	struct ledger_entry e = { .pid = pid, .start_time = 123456789012ULL, .owner = owner };

	strcpy(e.comm, "x264");
	if (owner == LEDGER_RULE)
		strcpy(e.rule, "encoder");
	cpulist_parse(original, &e.original);
	cpulist_parse(cpus, &e.cpus);
	return e;
}

static void a_ledger_reads_back_as_written(void) {
	struct ledger_entry in[3] = { entry(812, LEDGER_RULE, "0-15", "0-7"), entry(813, LEDGER_HAND, "3", "8-15"),
				      entry(900, LEDGER_AUTO, "0-1023", "1022") }, *out;
	size_t n;
	char *text, *error;

	in[1].inherited_from = 812;
	CHECK_INT(ledger_format(in, 3, &text), 0);
	CHECK_INT(ledger_parse(text, &out, &n, &error), 0);
	CHECK_INT(n, 3);
	for (size_t i = 0; i < 3; i++) {
		CHECK_INT(out[i].pid, in[i].pid);
		CHECK(out[i].start_time == in[i].start_time);
		CHECK_STR(out[i].comm, in[i].comm);
		CHECK_INT(out[i].owner, in[i].owner);
		CHECK_STR(out[i].rule, in[i].rule);
		CHECK_INT(out[i].inherited_from, in[i].inherited_from);
		CHECK(CPU_EQUAL(&out[i].original, &in[i].original));
		CHECK(CPU_EQUAL(&out[i].cpus, &in[i].cpus));
	}
	free(out);
	free(text);
}

static void nothing_owed_is_an_empty_list(void) {
	struct ledger_entry *out;
	size_t n;
	char *text, *error;

	CHECK_INT(ledger_format(NULL, 0, &text), 0);
	CHECK_INT(ledger_parse(text, &out, &n, &error), 0);
	CHECK_INT(n, 0);
	CHECK(out == NULL);
	free(text);
}

/* Each broken ledger is refused whole, with what is wrong. */
static void broken_ledgers_say_why(void) {
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "", "not JSON" },
		{ "{\"version\": 1, \"processes\": [", "not JSON" },
		{ "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "not JSON" },
		{ "[]", "not a version 1 ledger" },
		{ "{\"version\": 2, \"processes\": []}", "not a version 1 ledger" },
		{ "{\"version\": 1}", "no processes array" },
		{ "{\"version\": 1, \"processes\": [7]}", "process 0 is not an object" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 0, \"start_time\": 1}]}", "no valid pid" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 5, \"start_time\": -1}]}", "no valid pid" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 5, \"start_time\": 1, \"comm\": \"a\", \"owner\": \"rule\", "
		  "\"original\": \"0\", \"cpus\": \"1\"}]}", "process 5: no valid rule name" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 5, \"start_time\": 1, \"comm\": \"a\", \"owner\": \"god\", "
		  "\"original\": \"0\", \"cpus\": \"1\"}]}", "owner is not rule, hand, auto or released" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 5, \"start_time\": 1, \"comm\": \"a\", \"owner\": \"hand\", "
		  "\"original\": \"\", \"cpus\": \"1\"}]}", "original is not a CPU list" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 5, \"start_time\": 1, \"comm\": \"a\", \"owner\": \"hand\", "
		  "\"original\": \"0\", \"cpus\": \"9999\"}]}", "cpus is not a CPU list" },
		{ "{\"version\": 1, \"processes\": [{\"pid\": 5, \"start_time\": 1, \"comm\": \"a name far too long\", "
		  "\"owner\": \"hand\", \"original\": \"0\", \"cpus\": \"1\"}]}", "no valid comm" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ledger_entry *out = (void *)1;
		size_t n = 1;
		char *error = NULL;

		CHECK_INT(ledger_parse(cases[i].text, &out, &n, &error), -EINVAL);
		CHECK(out == NULL && n == 0);
		CHECK(error != NULL);
		if (error && !strstr(error, cases[i].error))
			printf("# case %zu: \"%s\" does not say \"%s\"\n", i, error, cases[i].error);
		CHECK(error && strstr(error, cases[i].error));
		free(error);
	}
}

static int entries_in(const char *dir) {
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void written_atomically_and_removed(void) {
	char dir[] = "/tmp/ccxd-ledger.XXXXXX", path[64];
	struct ledger_entry in = entry(42, LEDGER_HAND, "0-1", "1"), *out;
	struct stat sb;
	size_t n;
	char *text, *error;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_INT(ledger_read(dir, &out, &n, &error), -ENOENT);
	CHECK_INT(ledger_format(&in, 1, &text), 0);
	CHECK_INT(ledger_write(dir, text), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, LEDGER_FILE);
	CHECK_INT(stat(path, &sb), 0);
	CHECK_INT(sb.st_mode & 07777, 0600);
	CHECK_INT(entries_in(dir), 1);     /* the temporary file was renamed, not left behind */
	CHECK_INT(ledger_read(dir, &out, &n, &error), 0);
	CHECK_INT(n, 1);
	CHECK_INT(out[0].pid, 42);
	free(out);
	CHECK_INT(ledger_remove(dir), 0);
	CHECK_INT(ledger_remove(dir), 0);  /* nothing to remove is fine */
	CHECK_INT(ledger_read(dir, &out, &n, &error), -ENOENT);
	CHECK_INT(ledger_write("/nonexistent-dir", text), -ENOENT);
	free(text);
	rmdir(dir);
}

/* The log holds what the file does not yet: a line before each narrowing. */
static void the_log_brings_the_file_up_to_date(void) {
	struct ledger_entry in = entry(42, LEDGER_RULE, "0-15", "0-7"), later = entry(42, LEDGER_RULE, "0-15", "8-15"),
			    other = entry(77, LEDGER_AUTO, "0-3", "2"), *e = calloc(1, sizeof(*e));
	char line[256], text[1024];
	size_t n = 1;
	int len;

	e[0] = in;
	len = ledger_log_line(&later, line, sizeof(line));
	CHECK(len > 0);
	CHECK_STR(line, "42 123456789012 0-15 8-15\n");
	snprintf(text, sizeof(text), "%s", line);
	CHECK(ledger_log_line(&other, text + strlen(text), sizeof(text) - strlen(text)) > 0);
	CHECK_INT(ledger_apply_log(text, &e, &n), 0);
	CHECK_INT(n, 2);
	CHECK_STR(e[0].rule, "encoder");                 /* the file's, with what was set since */
	CHECK(CPU_EQUAL(&e[0].cpus, &later.cpus));
	CHECK_INT(e[1].pid, 77);                          /* only in the log: whose is not known */
	CHECK_INT(e[1].owner, LEDGER_AUTO);
	CHECK(CPU_EQUAL(&e[1].original, &other.original));
	/* A line cut short by a crash, and anything after a line that is not
	 * the log's, changes nothing. */
	CHECK_INT(ledger_apply_log("88 5 0-1 1\n99 6 0-1", &e, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(ledger_apply_log("junk\n90 5 0-1 1\n", &e, &n), 0);
	CHECK_INT(ledger_apply_log("91 5 0-1 1 extra\n", &e, &n), 0);
	CHECK_INT(ledger_apply_log("-3 5 0-1 1\n", &e, &n), 0);
	CHECK_INT(n, 3);
	free(e);
	CHECK_INT(ledger_log_line(&later, line, 8), -ENOBUFS);
}

/* A log alone is read (ccxd died before it first wrote the file); root
 * reads neither through a link (ccxd --give-back, in a directory that
 * ccxd's user owns). */
static void a_log_alone_and_no_links(void) {
	char dir[] = "/tmp/ccxd-ledger.XXXXXX", path[64], target[64];
	struct ledger_entry *out;
	size_t n;
	char *error;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/%s", dir, LEDGER_LOG_FILE);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("42 7 0-1 1\n", f);
		fclose(f);
	}
	CHECK_INT(ledger_read(dir, &out, &n, &error), 0);
	CHECK_INT(n, 1);
	CHECK_INT(out[0].pid, 42);
	free(out);
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	CHECK_INT(rename(path, target), 0);
	CHECK_INT(symlink(target, path), 0);
	CHECK_INT(ledger_read(dir, &out, &n, &error), -EINVAL);
	CHECK(error && strstr(error, "symbolic link"));
	free(error);
	CHECK_INT(ledger_remove(dir), 0);
	CHECK_INT(unlink(target), 0);
	CHECK_INT(entries_in(dir), 0);
	rmdir(dir);
}

TEST_MAIN(T(a_ledger_reads_back_as_written), T(nothing_owed_is_an_empty_list), T(broken_ledgers_say_why),
	  T(written_atomically_and_removed), T(the_log_brings_the_file_up_to_date), T(a_log_alone_and_no_links))
