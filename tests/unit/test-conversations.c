/* Conversations from traffic counts written as struct literals: who wrote
 * into a queue and who read it out, paired and summed per pair of
 * processes; what /proc showed of the kinds counted replaced. */
#include <stdlib.h>

#include "conversations.h"
#include "test.h"

static struct sampler_process procs[] = {
	{ .pid = 10 }, { .pid = 11 }, { .pid = 12 }, { .pid = 13 }, { .pid = 20 },
};

static struct sampler_result *sample(void) {
	struct sampler_result *r = calloc(1, sizeof(*r));

	r->procs = calloc(5, sizeof(*r->procs));
	memcpy(r->procs, procs, sizeof(procs));
	r->n_procs = 5;
	return r;
}

static const struct sampler_channel *channel(const struct sampler_result *r, enum channel_kind kind, pid_t a, pid_t b) {
	for (size_t i = 0; i < r->n_channels; i++)
		if (r->channels[i].kind == kind && ((r->channels[i].from == a && r->channels[i].to == b) ||
						    (r->channels[i].from == b && r->channels[i].to == a)))
			return &r->channels[i];
	return NULL;
}

#define W TRAFFIC_WRITE
#define R TRAFFIC_READ

/* A pipe 10 > 11, the writer writing 1000 bytes in 10 calls and the reader
 * reading them in 4; 20 holds it too and never uses it. */
static void a_pipe_is_its_writer_and_reader(void) {
	struct traffic_entry e[] = {
		{ 7, 10, TRAFFIC_PIPE, W, 1000, 10 },
		{ 7, 11, TRAFFIC_PIPE, R, 1000, 4 },
	};
	struct sampler_result *r = sample();
	const struct sampler_channel *c;
	size_t allocated = 0;

	CHECK_INT(conversations_add(r, &allocated, e, 2, 2.0, true, true), 0);
	CHECK_INT(r->n_channels, 1);
	c = channel(r, CHANNEL_PIPE, 10, 11);
	CHECK(c && c->from == 10 && c->to == 11 && c->exact && !c->both);
	CHECK(c && c->bytes_per_s == 500 && c->messages_per_s == 2 && c->inode == 7);
	CHECK(r->procs[0].counted_write_bps == 500 && r->procs[1].counted_read_bps == 500);
	sampler_result_free(r);
}

/* Three writers into one reader's pipe (hackbench): each pair carries its
 * writer's share. */
static void writers_of_one_pipe_each_have_their_share(void) {
	struct traffic_entry e[] = {
		{ 9, 10, TRAFFIC_PIPE, W, 100, 1 },
		{ 9, 11, TRAFFIC_PIPE, W, 300, 3 },
		{ 9, 12, TRAFFIC_PIPE, W, 600, 6 },
		{ 9, 13, TRAFFIC_PIPE, R, 1000, 10 },
	};
	struct sampler_result *r = sample();
	const struct sampler_channel *a, *b, *c;
	size_t allocated = 0;

	CHECK_INT(conversations_add(r, &allocated, e, 4, 1.0, true, true), 0);
	CHECK_INT(r->n_channels, 3);
	a = channel(r, CHANNEL_PIPE, 10, 13);
	b = channel(r, CHANNEL_PIPE, 11, 13);
	c = channel(r, CHANNEL_PIPE, 12, 13);
	CHECK(a && b && c);
	CHECK(a && a->bytes_per_s == 100 && a->messages_per_s == 1);
	CHECK(b && b->bytes_per_s == 300 && b->messages_per_s == 3);
	CHECK(c && c->bytes_per_s == 600 && c->messages_per_s == 6);
	sampler_result_free(r);
}

/* Three short TCP connections from 10 to 20, a request and a reply each,
 * and a Unix one: one TCP channel with all three, both ways, from the end
 * that sent more; the Unix one apart. */
static void connections_of_a_pair_add_up(void) {
	struct traffic_entry e[] = {
		{ 5, 10, TRAFFIC_UNIX, W, 50, 1 },
		{ 5, 20, TRAFFIC_UNIX, R, 50, 1 },
		{ 101, 10, TRAFFIC_TCP, W, 100, 1 },
		{ 101, 20, TRAFFIC_TCP, R, 100, 1 },
		{ 102, 10, TRAFFIC_TCP, R, 1000, 2 },
		{ 102, 20, TRAFFIC_TCP, W, 1000, 1 },
		{ 103, 10, TRAFFIC_TCP, W, 100, 1 },
		{ 103, 20, TRAFFIC_TCP, R, 100, 1 },
		{ 104, 10, TRAFFIC_TCP, R, 1000, 1 },
		{ 104, 20, TRAFFIC_TCP, W, 1000, 1 },
		{ 105, 10, TRAFFIC_TCP, W, 100, 1 },
		{ 105, 20, TRAFFIC_TCP, R, 100, 1 },
		{ 106, 10, TRAFFIC_TCP, R, 1000, 1 },
		{ 106, 20, TRAFFIC_TCP, W, 1000, 1 },
	};
	struct sampler_result *r = sample();
	const struct sampler_channel *c, *u;
	size_t allocated = 0;

	CHECK_INT(conversations_add(r, &allocated, e, 14, 1.0, true, true), 0);
	CHECK_INT(r->n_channels, 2);
	c = channel(r, CHANNEL_TCP, 10, 20);
	u = channel(r, CHANNEL_UNIX, 10, 20);
	CHECK(c && c->from == 20 && c->to == 10 && c->both && c->inode == 0);
	CHECK(c && c->bytes_per_s == 3300 && c->messages_per_s == 7);
	CHECK(u && u->from == 10 && u->bytes_per_s == 50 && u->inode == 5 && !u->both);
	CHECK(r->procs[0].counted_write_bps == 350 && r->procs[0].counted_read_bps == 3000);
	sampler_result_free(r);
}

/* A process reading what it wrote itself, a queue only written (its
 * reader has not read yet) and a process that was not active: no channel,
 * but the active ones' counted bytes. */
static void nothing_but_pairs_that_moved_data(void) {
	struct traffic_entry e[] = {
		{ 1, 10, TRAFFIC_PIPE, W, 100, 1 },
		{ 1, 10, TRAFFIC_PIPE, R, 100, 1 },
		{ 2, 11, TRAFFIC_PIPE, W, 100, 1 },
		{ 3, 12, TRAFFIC_PIPE, W, 100, 1 },
		{ 3, 99, TRAFFIC_PIPE, R, 100, 1 },
	};
	struct sampler_result *r = sample();
	size_t allocated = 0;

	CHECK_INT(conversations_add(r, &allocated, e, 5, 1.0, true, true), 0);
	CHECK_INT(r->n_channels, 0);
	CHECK(r->procs[0].counted_write_bps == 100 && r->procs[0].counted_read_bps == 100);
	CHECK(r->procs[2].counted_write_bps == 100);
	sampler_result_free(r);
}

/* Where only sockets are counted, the pipes /proc showed stay, with no
 * counts of their own; its sockets go. */
static void replaces_only_what_is_counted(void) {
	struct traffic_entry e[] = {
		{ 5, 10, TRAFFIC_UNIX, W, 50, 1 },
		{ 5, 11, TRAFFIC_UNIX, R, 50, 1 },
	};
	struct sampler_result *r = sample();
	size_t allocated = 3;

	r->channels = calloc(allocated, sizeof(*r->channels));
	r->channels[0] = (struct sampler_channel){ .kind = CHANNEL_PIPE, .from = 12, .to = 13, .inode = 3 };
	r->channels[1] = (struct sampler_channel){ .kind = CHANNEL_UNIX, .from = 12, .to = 20, .inode = 4 };
	r->channels[2] = (struct sampler_channel){ .kind = CHANNEL_TCP, .from = 10, .to = 13 };
	r->n_channels = 3;
	CHECK_INT(conversations_add(r, &allocated, e, 2, 1.0, false, true), 0);
	CHECK_INT(r->n_channels, 2);
	CHECK(channel(r, CHANNEL_PIPE, 12, 13) && !channel(r, CHANNEL_PIPE, 12, 13)->exact);
	CHECK(channel(r, CHANNEL_UNIX, 10, 11) && channel(r, CHANNEL_UNIX, 10, 11)->exact);
	sampler_result_free(r);
}

TEST_MAIN(T(a_pipe_is_its_writer_and_reader), T(writers_of_one_pipe_each_have_their_share),
	  T(connections_of_a_pair_add_up), T(nothing_but_pairs_that_moved_data), T(replaces_only_what_is_counted))
