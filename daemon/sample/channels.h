/* The channels of a sample, between the processes that were active in it:
 * the pipe and socket fds they hold (endpoints), the pipes that connect
 * them, a process's own busy threads, and the bytes a channel carries where
 * it has no counter of its own. Which sockets are connected is peers.h's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procfs.h"
#include "sample.h"

/* One pipe or socket fd of an active process. */
struct endpoint {
	enum procfs_fd_kind kind;
	uint64_t inode;
	size_t proc;               /* index into the result's procs */
	bool readable, writable;
};

/* fds, of the active process procs[proc], onto *eps (*n of them, room for
 * *allocated). */
int channels_add_endpoints(struct endpoint **eps, size_t *n, size_t *allocated, struct procfs_fd *fds, size_t n_fds,
			   size_t proc);

/* Sorts eps by kind, then inode, then process, and merges them: one entry
 * per (kind, inode, process). */
void channels_merge_endpoints(struct endpoint *eps, size_t *n);

/* The process (procs[]) that holds socket inode, in merged eps; -1 if none. */
long channels_socket_owner(const struct endpoint *eps, size_t n, uint64_t inode);

/* A new channel, zeroed, at the end of r's (room for *allocated); NULL
 * without memory. */
struct sampler_channel *channels_add(struct sampler_result *r, size_t *allocated);

/* The pipes between the processes of merged eps, into res. */
int channels_pipes(const struct endpoint *eps, size_t n, struct sampler_result *res, size_t *allocated);

/* A channel of its own for each process of res with busy threads. */
int channels_threads(struct sampler_result *res, size_t *allocated);

/* The bytes per second of res's other pipe and Unix socket channels, from
 * their processes' read(2)/write(2) bytes. */
void channels_share_bytes(struct sampler_result *res);
