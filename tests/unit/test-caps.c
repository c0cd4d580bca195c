/* CAP_BPF and CAP_PERFMON after the loads: dropped from every set where the
 * kernel answers bpf() without them, kept (and in effect) where it does not,
 * and nothing to do where they were never held. Each test runs in a child
 * of its own, so what it drops is its own. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "caps.h"
#include "test.h"

#define CAP_PERFMON_ 38
#define CAP_BPF_ 39

static struct __user_cap_data_struct held[_LINUX_CAPABILITY_U32S_3];

static void read_caps(void) {
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	if (syscall(SYS_capget, &h, held) < 0)
		SKIP_TEST("capget failed");
}

static bool has(int cap, bool effective) {
	const struct __user_cap_data_struct *d = &held[cap / 32];

	return ((effective ? d->effective : d->permitted) >> (cap % 32)) & 1;
}

/* Leaves this process with only the capabilities in keep (a mask of the
 * low word) and those of the BPF ones wanted: as the service holds them,
 * without CAP_SYS_ADMIN, which would let every bpf() call through. */
static void hold_only(uint32_t keep, bool bpf) {
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };

	read_caps();
	if (!has(CAP_SYS_NICE, false) || !has(CAP_BPF_, false) || !has(CAP_PERFMON_, false))
		SKIP_TEST("needs CAP_SYS_NICE, CAP_BPF and CAP_PERFMON to start with");
	held[0].effective = held[0].permitted = keep;
	held[0].inheritable = 0;
	held[1].effective = held[1].permitted = held[1].inheritable =
		bpf ? (1U << (CAP_BPF_ - 32)) | (1U << (CAP_PERFMON_ - 32)) : 0;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capset, &h, held) < 0)
		SKIP_TEST("capset failed");
}

static void dropped_where_the_kernel_answers_without_them(void) {
	enum caps_bpf r;

	hold_only(1U << CAP_SYS_NICE, true);
	r = caps_drop_bpf(true);
	read_caps();
	CHECK(r == CAPS_BPF_DROPPED || r == CAPS_BPF_KEPT);
	if (r == CAPS_BPF_DROPPED) {
		/* Gone from every set, and the others stay. */
		CHECK(!has(CAP_BPF_, false) && !has(CAP_PERFMON_, false));
		CHECK(!has(CAP_BPF_, true) && !has(CAP_PERFMON_, true));
		CHECK_INT(held[1].inheritable, 0);
		CHECK_INT(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, CAP_BPF_, 0, 0), 0);
	} else {
		/* Linux before 6.5 with kernel.unprivileged_bpf_disabled: in effect still. */
		printf("# this kernel wants CAP_BPF for every bpf() call: kept\n");
		CHECK(has(CAP_BPF_, true) && has(CAP_PERFMON_, true));
	}
	CHECK(has(CAP_SYS_NICE, true));
	CHECK_STR(caps_bpf_to_string(r), r == CAPS_BPF_DROPPED ? "dropped" : "kept");
}

static void nothing_loaded_drops_them_whatever_the_kernel(void) {
	hold_only(1U << CAP_SYS_NICE, true);
	CHECK_INT(caps_drop_bpf(false), CAPS_BPF_DROPPED);
	read_caps();
	CHECK(!has(CAP_BPF_, false) && !has(CAP_PERFMON_, false));
	CHECK(has(CAP_SYS_NICE, true));
}

static void never_held_nothing_to_do(void) {
	hold_only(1U << CAP_SYS_NICE, false);
	CHECK_INT(caps_drop_bpf(true), CAPS_BPF_NONE);
	CHECK_STR(caps_bpf_to_string(CAPS_BPF_NONE), "none");
	read_caps();
	CHECK(has(CAP_SYS_NICE, true));
}

TEST_MAIN(T(dropped_where_the_kernel_answers_without_them), T(nothing_loaded_drops_them_whatever_the_kernel),
	  T(never_held_nothing_to_do))
