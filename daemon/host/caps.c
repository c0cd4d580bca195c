#include "caps.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/capability.h>

#include "log.h"
#include "util.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static const int bpf_caps[] = { CAP_BPF, CAP_PERFMON };
#define N_BPF_CAPS (sizeof(bpf_caps) / sizeof(bpf_caps[0]))

struct caps {
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
};

static int caps_get(struct caps *c) {
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	/* Both words are written by the kernel; memcheck knows of the first
	 * only, and CAP_BPF is in the second. */
	memset(c, 0, sizeof(*c));

	return syscall(SYS_capget, &h, c->d) < 0 ? -errno : 0;
}

static int caps_set(struct caps *c) {
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };

	return syscall(SYS_capset, &h, c->d) < 0 ? -errno : 0;
}

#define CAP_WORD(cap) ((cap) / 32)
#define CAP_BIT(cap) (1U << ((cap) % 32))

static bool holds_any(const struct caps *c) {
	for (size_t i = 0; i < N_BPF_CAPS; i++)
		if (c->d[CAP_WORD(bpf_caps[i])].permitted & CAP_BIT(bpf_caps[i]))
			return true;
	return false;
}

/* c without the BPF capabilities in effective, and in the others too
 * when all. */
static struct caps without(const struct caps *c, bool all) {
	struct caps w = *c;

	for (size_t i = 0; i < N_BPF_CAPS; i++) {
		struct __user_cap_data_struct *d = &w.d[CAP_WORD(bpf_caps[i])];
		d->effective &= ~CAP_BIT(bpf_caps[i]);
		if (all) {
			d->permitted &= ~CAP_BIT(bpf_caps[i]);
			d->inheritable &= ~CAP_BIT(bpf_caps[i]);
		}
	}
	return w;
}

/* Whether bpf() answers without the BPF capabilities in effect. A link to
 * an fd that is no program: past the kernel's gate it reads EBADF; a
 * kernel that wants CAP_BPF for every command (before 6.5, with
 * kernel.unprivileged_bpf_disabled set), or a security module that refuses
 * bpf(), answers EPERM before looking at it. Nothing is made either way. */
static int bpf_answers(void) {
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (__u32)-1;
	attr.link_create.target_fd = (__u32)-1;
	if (syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr)) >= 0)
		return -EEXIST;   /* cannot be: nothing to link */
	return errno == EBADF ? 0 : -errno;
}

enum caps_bpf caps_drop_bpf(bool loaded) {
	struct caps held, lowered, none;
	int r;

	r = caps_get(&held);
	if (r < 0) {
		log_warning_errno(r, "Failed to read this process's capabilities, keeping CAP_BPF and CAP_PERFMON: %m");
		return CAPS_BPF_KEPT;
	}
	if (!holds_any(&held))
		return CAPS_BPF_NONE;
	/* Out of effective only first: from permitted they come back if the
	 * kernel turns out to want them. */
	lowered = without(&held, false);
	r = caps_set(&lowered);
	if (r < 0) {
		log_warning_errno(r, "Failed to lower CAP_BPF and CAP_PERFMON, keeping them: %m");
		return CAPS_BPF_KEPT;
	}
	r = loaded ? bpf_answers() : 0;
	if (r < 0) {
		int raised = caps_set(&held);
		if (raised < 0)
			log_error_errno(raised, "Failed to raise CAP_BPF and CAP_PERFMON again: %m");
		log_info_errno(r, "Keeping CAP_BPF and CAP_PERFMON: this kernel wants them for every bpf() call (%m)");
		return CAPS_BPF_KEPT;
	}
	/* Ambient ones would be given to whatever ccxd executed. */
	for (size_t i = 0; i < N_BPF_CAPS; i++)
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, bpf_caps[i], 0, 0) < 0 && errno != EINVAL)
			log_debug_errno(-errno, "Failed to lower ambient capability %d: %m", bpf_caps[i]);
	none = without(&held, true);
	r = caps_set(&none);
	if (r < 0) {
		/* Out of effective still: what is loaded works as the check showed. */
		log_warning_errno(r, "Failed to drop CAP_BPF and CAP_PERFMON, only lowered: %m");
		return CAPS_BPF_KEPT;
	}
	log_info("%s: CAP_BPF and CAP_PERFMON dropped", loaded ? "BPF programs loaded" : "No BPF programs");
	return CAPS_BPF_DROPPED;
}

static const char *const bpf_names[] = {
	[CAPS_BPF_NONE] = "none",
	[CAPS_BPF_DROPPED] = "dropped",
	[CAPS_BPF_KEPT] = "kept",
};

const char *caps_bpf_to_string(enum caps_bpf c) {
	const char *name = NAME_OF(bpf_names, c);

	return name ? name : "unknown";
}
