/* Who is at the other end of a socket, and how many bytes went through it:
 * NETLINK_SOCK_DIAG dumps, through libnl-3. One dump of each kind per sample
 * cycle answers for every socket of the machine at once. */
#pragma once

#include <stdint.h>
#include <stddef.h>

struct sockdiag_unix {
	uint64_t inode;
	uint64_t peer;             /* inode of the connected peer, 0 if none */
	uint32_t rqueue;           /* bytes waiting to be read */
};

struct sockdiag_tcp {
	uint64_t inode;
	uint16_t sport, dport;     /* host order */
	uint64_t bytes_acked;      /* sent and acknowledged */
	uint64_t bytes_received;
};

struct sockdiag;

int sockdiag_new(struct sockdiag **ret);
void sockdiag_free(struct sockdiag *d);

/* Every Unix stream/seqpacket/datagram socket with a peer. */
int sockdiag_unix(struct sockdiag *d, struct sockdiag_unix **ret, size_t *n);

/* Every established TCP (IPv4 and IPv6) socket between loopback addresses,
 * with tcp_info's true byte counters. */
int sockdiag_tcp_loopback(struct sockdiag *d, struct sockdiag_tcp **ret, size_t *n);
