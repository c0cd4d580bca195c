/* What a pipe carried where the kernel does not count it: estimated from
 * its ends' read(2)/write(2) bytes and wake-ups, from samples built here. */
#include "channels.h"
#include "groups.h"
#include "test.h"

/* A sample of two active processes, 100 writing into a pipe that 200
 * reads, with their bytes and wake-ups a second. */
struct two {
	struct sampler_process procs[2];
	struct sampler_channel pipe;
	struct sampler_result res;
};

static void sample_two(struct two *t, double written, double writer_wakes, double read, double reader_wakes) {
	*t = (struct two){
		.procs = { { .pid = 100, .write_bps = written, .wakeups_per_s = writer_wakes },
			   { .pid = 200, .read_bps = read, .wakeups_per_s = reader_wakes } },
		.pipe = { .kind = CHANNEL_PIPE, .from = 100, .to = 200, .inode = 7 },
	};
	t->res = (struct sampler_result){ .window_usec = 500000, .procs = t->procs, .n_procs = 2,
					  .channels = &t->pipe, .n_channels = 1 };
	channels_share_bytes(&t->res);
}

/* cat /dev/zero 2>&1 >/dev/null | a loop that never reads: cat writes
 * GB/s, the loop never sleeps and counted only its libraries' reads as it
 * started. The pipe carried no more than those, too few for a group. */
static void a_reader_that_never_sleeps_bounds_the_pipe(void) {
	struct two t;

	sample_two(&t, 4e9, 0, 20e3, 0);
	CHECK(t.pipe.bytes_per_s == 20e3);
	CHECK(t.pipe.bytes_per_s < GROUPS_DEFAULT_MIN_RATE);
	/* A writer that never sleeps bounds it the same way. */
	sample_two(&t, 30e3, 0, 2e9, 5000);
	CHECK(t.pipe.bytes_per_s == 30e3);
}

/* pv reads its pipe with splice(2), which no counter sees: it counted
 * nothing, but sleeps on the pipe thousands of times a second. The pipe
 * carried what the writer wrote. */
static void a_reader_that_splices_carries_the_writers_bytes(void) {
	struct two t;

	sample_two(&t, 1e9, 0, 0, 5000);
	CHECK(t.pipe.bytes_per_s == 1e9);
	/* And one that splices a little and reads a little. */
	sample_two(&t, 1e9, 0, 4096, 5000);
	CHECK(t.pipe.bytes_per_s == 1e9);
}

/* A reader slower than its writer: the writer sleeps on the full pipe,
 * the reader never does, and its reads are what went through. */
static void a_slow_reader_carries_what_it_read(void) {
	struct two t;

	sample_two(&t, 3e9, 4000, 2e8, 0);
	CHECK(t.pipe.bytes_per_s == 2e8);
	/* Both sleeping on the pipe in turn: the busier end's count. */
	sample_two(&t, 3e8, 2000, 2e8, 2000);
	CHECK(t.pipe.bytes_per_s == 3e8);
}

/* A reader asleep elsewhere, with neither bytes nor wake-ups: the pipe is
 * not in use, whatever the writer writes to other files. */
static void a_reader_asleep_carries_nothing(void) {
	struct two t;

	sample_two(&t, 4e9, 0, 0, 0);
	CHECK(t.pipe.bytes_per_s == 0);
	CHECK(t.pipe.messages_per_s == 0);
}

TEST_MAIN(T(a_reader_that_never_sleeps_bounds_the_pipe), T(a_reader_that_splices_carries_the_writers_bytes),
	  T(a_slow_reader_carries_what_it_read), T(a_reader_asleep_carries_nothing))
