/* What the BPF programs of daemon/sample/bpf/traffic.bpf.c count and traffic.c
 * reads: an element of a counts map per channel, process and direction. */
#pragma once
#include <linux/types.h>

#define TRAFFIC_REC_PIPE 0
#define TRAFFIC_REC_UNIX 1
#define TRAFFIC_REC_TCP 2
#define TRAFFIC_REC_WRITE 0        /* write(2), send(2), splice(2) into a pipe */
#define TRAFFIC_REC_READ 1         /* read(2), recv(2), splice(2) out of a pipe */

/* The elements of each of the two counts maps: queues, processes and
 * directions that moved data between two reads, 16 bytes + 16 bytes each. */
#define TRAFFIC_ENTRIES 16384

struct traffic_key {
	__u64 queue;               /* a pipe's inode, a Unix socket's (the receiving end's),
				    * or a hash of a TCP connection's receiving and sending ends */
	__u32 pid;                 /* the process's, as the reader's pid namespace numbers it */
	__u8 kind;                 /* TRAFFIC_REC_PIPE, _UNIX or _TCP */
	__u8 direction;            /* TRAFFIC_REC_WRITE or _READ */
	__u16 pad;
};

struct traffic_value {
	__u64 bytes;
	__u64 messages;            /* the calls that moved a byte or more */
};

/* A thinned process (traffic_thin()) is counted one call in this many, at
 * random, each counted call standing for this many and its bytes as many
 * times. */
#define TRAFFIC_THIN_EVERY 16

/* Set by the loader before the programs are verified (.rodata). */
struct traffic_config {
	__u32 pidns_inum;          /* the reader's pid namespace, 0: the initial one */
};

/* The programs' global variables (.bss), which the reader maps. */
struct traffic_shared {
	__u32 generation;          /* its lowest bit: the counts map counted into */
	__u32 pad;
	__u64 inflight[2];         /* the programs at work in each counts map */
	__u64 lost;                /* the calls not counted because a map was full */
};
