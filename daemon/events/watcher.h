/* Process events from the kernel's netlink proc connector, through libnl-3, in
 * the sd-event loop. When the connector is not available (no privilege, or a
 * PID namespace where LISTEN is silently ignored) the watcher says so once and
 * the daemon falls back to scanning /proc. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

struct watcher_ops {
	/* child_pid != child_tgid: a new thread, not a new process */
	void (*fork)(void *userdata, pid_t parent_tgid, pid_t child_pid, pid_t child_tgid);
	/* at_ns: when the kernel sent it (CLOCK_MONOTONIC) */
	void (*exec)(void *userdata, pid_t tgid, uint64_t at_ns);
	/* pid != tgid: a thread renamed itself */
	void (*comm)(void *userdata, pid_t pid, pid_t tgid);
	void (*exit)(void *userdata, pid_t pid, pid_t tgid);
	/* The kernel dropped events (receive buffer full): the table needs a rescan. */
	void (*lost)(void *userdata);
	/* No events will come; why says so for people. */
	void (*unavailable)(void *userdata, const char *why);
};

/* Event kinds a watcher can ask the kernel for (the proc connector's own bits). */
#define WATCHER_FORK  0x00000001u
#define WATCHER_EXEC  0x00000002u
#define WATCHER_COMM  0x00000200u
#define WATCHER_EXIT  0x80000000u

struct watcher_stats {
	uint64_t events;          /* events handled */
	uint64_t lost;            /* times the kernel reported lost events */
};

struct watcher;

/* Connects and subscribes. Returns 0 with *ret set, even when the connector
 * turns out to be unavailable (ops->unavailable is then called from the event
 * loop, never from here). */
int watcher_new(sd_event *e, const struct watcher_ops *ops, void *userdata, struct watcher **ret);
void watcher_free(struct watcher *w);

/* Asks for only these kinds of event. Kernels since 6.6 filter them at the
 * source, which spares a wake-up per event not wanted; older ones keep
 * sending everything, so callers must be ready for any kind. */
void watcher_subscribe(struct watcher *w, uint32_t events);

bool watcher_active(const struct watcher *w);
struct watcher_stats watcher_stats(const struct watcher *w);
