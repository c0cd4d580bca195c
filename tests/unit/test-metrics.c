#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "metrics.h"
#include "test.h"

static struct metrics sample(void) {
	return (struct metrics) {
		.version = "0.1.0",
		.mode = "enforce",
		.topology = "system",
		.start_time_usec = 1700000000250000ULL,
		.polling = true,
		.processes = { { "pinned", 3 }, { "dry-run", 0 }, { "skipped", 1 } },
		.n_processes = 3,
		.moves = 8,
		.decisions_kept = 5,
		.decisions_reverted = 2,
		.events = 1234,
		.event_overflows = 1,
		.rescans = 7,
		.pins = 9,
		.restores = 4,
		.pin_failures = 1,
		.reloads = 2,
		.reload_failures = 1,
		.readopted = 3,
		.log_dropped = 6,
	};
}

static char *format(const struct metrics *x) {
	char *text = NULL;

	CHECK_INT(metrics_format(x, &text), 0);
	CHECK(text != NULL);
	return text ? text : strdup("");
}

/* text holds line as a whole line */
static bool has_line(const char *text, const char *line) {
	size_t len = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[len] == '\n')
			return true;
	return false;
}

#define CHECK_LINE(text, line) do { \
	if (!has_line((text), (line))) { \
		printf("# missing line: %s\n", (line)); \
		test_failed = 1; \
	} \
} while (0)

static void prints_every_counter_with_its_value(void) {
	struct metrics x = sample();
	char *text = format(&x);

	CHECK_LINE(text, "ccxd_info{version=\"0.1.0\",mode=\"enforce\",topology=\"system\"} 1");
	CHECK_LINE(text, "ccxd_start_time_seconds 1700000000.250000");
	CHECK_LINE(text, "ccxd_polling 1");
	CHECK_LINE(text, "ccxd_processes{state=\"pinned\"} 3");
	CHECK_LINE(text, "ccxd_processes{state=\"dry-run\"} 0");
	CHECK_LINE(text, "ccxd_processes{state=\"skipped\"} 1");
	CHECK_LINE(text, "ccxd_moves_total 8");
	CHECK_LINE(text, "ccxd_decisions_total{outcome=\"kept\"} 5");
	CHECK_LINE(text, "ccxd_decisions_total{outcome=\"reverted\"} 2");
	CHECK_LINE(text, "ccxd_process_events_total 1234");
	CHECK_LINE(text, "ccxd_process_event_overflows_total 1");
	CHECK_LINE(text, "ccxd_rescans_total 7");
	CHECK_LINE(text, "ccxd_pins_total 9");
	CHECK_LINE(text, "ccxd_restores_total 4");
	CHECK_LINE(text, "ccxd_pin_failures_total 1");
	CHECK_LINE(text, "ccxd_readopted_total 3");
	CHECK_LINE(text, "ccxd_reloads_total 2");
	CHECK_LINE(text, "ccxd_reload_failures_total 1");
	CHECK_LINE(text, "ccxd_log_messages_dropped_total 6");
	free(text);
}

static void gives_each_metric_help_and_type_once(void) {
	struct metrics x = sample();
	char *text = format(&x), *copy = strdup(text), *save = NULL;
	char last_type[128] = "";
	size_t samples = 0;

	CHECK_LINE(text, "# HELP ccxd_pins_total CPU affinities set.");
	CHECK_LINE(text, "# TYPE ccxd_pins_total counter");
	CHECK_LINE(text, "# TYPE ccxd_processes gauge");
	CHECK_LINE(text, "# TYPE ccxd_decisions_total counter");
	/* Every sample follows the TYPE line of its own metric, and every
	 * counter's name ends in _total. */
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128], type[32];
		size_t len;

		if (sscanf(line, "# TYPE %127s %31s", name, type) == 2) {
			char needle[160];
			snprintf(needle, sizeof(needle), "# TYPE %s ", name);
			CHECK(strstr(strstr(text, needle) + 1, needle) == NULL);
			if (strcmp(type, "counter") == 0) {
				len = strlen(name);
				CHECK(len > 6 && strcmp(name + len - 6, "_total") == 0);
			}
			snprintf(last_type, sizeof(last_type), "%s", name);
			continue;
		}
		if (line[0] == '#')
			continue;
		len = strcspn(line, "{ ");
		if (strlen(last_type) != len || strncmp(line, last_type, len) != 0) {
			printf("# sample without its TYPE: %s (last TYPE %s)\n", line, last_type);
			test_failed = 1;
		}
		samples++;
	}
	CHECK_INT(samples, 19);
	free(copy);
	free(text);
}

static void escapes_label_values(void) {
	struct metrics x = sample();
	char *text;

	x.topology = "xml:/tmp/a \"b\"\\c\nd.xml";
	text = format(&x);
	CHECK_LINE(text, "ccxd_info{version=\"0.1.0\",mode=\"enforce\",topology=\"xml:/tmp/a \\\"b\\\"\\\\c\\nd.xml\"} 1");
	free(text);
}

static void leaves_out_sampling_until_a_sampler_runs(void) {
	struct metrics x = sample();
	char *text = format(&x);

	CHECK(strstr(text, "ccxd_groups") == NULL);
	CHECK(strstr(text, "ccxd_sample_") == NULL);
	free(text);

	x.have_sampling = true;
	x.groups[0] = (struct metrics_count) { "observed", 2 };
	x.groups[1] = (struct metrics_count) { "no-room", 0 };
	x.n_groups = 2;
	x.sample_cycles = 11;
	x.sample_cycle_cpu_usec = 1500;
	text = format(&x);
	CHECK_LINE(text, "# TYPE ccxd_groups gauge");
	CHECK_LINE(text, "ccxd_groups{state=\"observed\"} 2");
	CHECK_LINE(text, "ccxd_groups{state=\"no-room\"} 0");
	CHECK_LINE(text, "ccxd_sample_cycles_total 11");
	CHECK_LINE(text, "ccxd_sample_cycle_cpu_seconds 0.001500");
	free(text);
}

/* Each group: what it is and where (an info series), its traffic, and
 * its gain and noise once an experiment measured them. */
static void gives_each_group_its_gauges(void) {
	struct metrics x = sample();
	char *text;

	x.have_sampling = true;
	x.each_group[0] = (struct metrics_group){ .id = 4242, .programs = "pv|yes", .state = "kept",
						  .seating = "shared-cpu", .ccx = 1, .bytes_per_s = 52428800,
						  .measured = true, .gain = 0.23, .noise = 0.04 };
	x.each_group[1] = (struct metrics_group){ .id = 77, .programs = "a\"b", .state = "measuring", .seating = "",
						  .ccx = -1, .bytes_per_s = 1048576 };
	x.n_each_group = 2;
	text = format(&x);
	CHECK_LINE(text, "# TYPE ccxd_group_info gauge");
	CHECK_LINE(text, "ccxd_group_info{group=\"4242\",programs=\"pv|yes\",state=\"kept\",seating=\"shared-cpu\",ccx=\"1\"} 1");
	CHECK_LINE(text, "ccxd_group_info{group=\"77\",programs=\"a\\\"b\",state=\"measuring\",seating=\"\",ccx=\"\"} 1");
	CHECK_LINE(text, "ccxd_group_bytes_per_second{group=\"4242\"} 52428800");
	CHECK_LINE(text, "ccxd_group_bytes_per_second{group=\"77\"} 1048576");
	CHECK_LINE(text, "ccxd_group_gain_ratio{group=\"4242\"} 0.2300");
	CHECK_LINE(text, "ccxd_group_noise_ratio{group=\"4242\"} 0.0400");
	/* Nothing measured, nothing pretended. */
	CHECK(strstr(text, "ccxd_group_gain_ratio{group=\"77\"}") == NULL);
	free(text);
}

static void leaves_out_probe_figures_until_measured(void) {
	struct metrics x = sample();
	char *text = format(&x);

	/* Nothing may pretend to be a measurement that was not made. */
	CHECK(strstr(text, "probe") == NULL);
	free(text);
}

static void shows_probe_figures_per_relation(void) {
	struct metrics x = sample();
	char *text;

	x.relations[0] = (struct metrics_relation){ "same-cpu", 1.5 * 1073741824.0, 1.8e-6 };
	x.relations[1] = (struct metrics_relation){ "same-ccx", 3.25 * 1073741824.0, 42e-9 };
	x.n_relations = 2;
	text = format(&x);
	CHECK_LINE(text, "# TYPE ccxd_probe_pipe_bytes_per_second gauge");
	CHECK_LINE(text, "ccxd_probe_pipe_bytes_per_second{relation=\"same-cpu\"} 1610612736");
	CHECK_LINE(text, "ccxd_probe_pipe_bytes_per_second{relation=\"same-ccx\"} 3489660928");
	CHECK_LINE(text, "ccxd_probe_latency_seconds{relation=\"same-cpu\"} 0.000001800");
	CHECK_LINE(text, "ccxd_probe_latency_seconds{relation=\"same-ccx\"} 0.000000042");
	free(text);
}

/* ---- the file ---- */

static char *temp_dir(void) {
	const char *dir = getenv("TMPDIR");
	char *path;

	if (asprintf(&path, "%s/ccxd-test-metrics-XXXXXX", dir && *dir ? dir : "/tmp") < 0 || !mkdtemp(path))
		abort();
	return path;
}

static size_t entries(const char *dir) {
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void writes_the_file_whole_and_readable(void) {
	char *dir = temp_dir(), *path, buf[256] = "";
	struct stat st;
	FILE *f;

	if (asprintf(&path, "%s/ccxd.prom", dir) < 0)
		abort();
	CHECK_INT(metrics_write_file(path, "old 1\n"), 0);
	CHECK_INT(metrics_write_file(path, "a 1\nb 2\n"), 0);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		buf[n] = '\0';
		fclose(f);
	}
	CHECK_STR(buf, "a 1\nb 2\n");
	CHECK_INT(stat(path, &st), 0);
	CHECK_INT(st.st_mode & 0777, 0644);
	CHECK_INT(entries(dir), 1);     /* no temporary file left behind */
	unlink(path);
	rmdir(dir);
	free(path);
	free(dir);
}

static void reports_a_directory_that_is_not_there(void) {
	CHECK_INT(metrics_write_file("/nonexistent-ccxd-dir/ccxd.prom", "a 1\n"), -ENOENT);
}

static void leaves_nothing_behind_when_the_rename_fails(void) {
	char *dir = temp_dir(), *path;

	/* A directory where the file should be: rename() refuses. */
	if (asprintf(&path, "%s/ccxd.prom", dir) < 0 || mkdir(path, 0755) < 0)
		abort();
	CHECK_INT(metrics_write_file(path, "a 1\n"), -EISDIR);
	CHECK_INT(entries(dir), 1);
	rmdir(path);
	rmdir(dir);
	free(path);
	free(dir);
}

TEST_MAIN(
	T(prints_every_counter_with_its_value),
	T(gives_each_metric_help_and_type_once),
	T(escapes_label_values),
	T(leaves_out_sampling_until_a_sampler_runs),
	T(gives_each_group_its_gauges),
	T(leaves_out_probe_figures_until_measured),
	T(shows_probe_figures_per_relation),
	T(writes_the_file_whole_and_readable),
	T(reports_a_directory_that_is_not_there),
	T(leaves_nothing_behind_when_the_rename_fails)
)
