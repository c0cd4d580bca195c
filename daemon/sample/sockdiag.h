/* Who is at the other end of a socket, and how many bytes went through it:
 * NETLINK_SOCK_DIAG, through libnl-3: dumps that answer for every socket of
 * the machine at once, and lookups of one known TCP connection. */
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
	uint8_t family;            /* AF_INET or AF_INET6 */
	uint16_t sport, dport;     /* host order */
	uint32_t src[4], dst[4];   /* network order, as inet_diag has them */
	uint32_t ifindex;          /* the device it is bound to, 0 if none */
	uint64_t bytes_acked;      /* sent and acknowledged */
	uint64_t bytes_received;
};

struct sockdiag;

int sockdiag_new(struct sockdiag **ret);
void sockdiag_free(struct sockdiag *d);

/* Every Unix stream/seqpacket/datagram socket with a peer. */
int sockdiag_unix(struct sockdiag *d, struct sockdiag_unix **ret, size_t *n);

/* Every established TCP (IPv4 and IPv6) socket between loopback addresses,
 * with tcp_info's true byte counters. The kernel walks its whole table of
 * connections for it, twice. */
int sockdiag_tcp_loopback(struct sockdiag *d, struct sockdiag_tcp **ret, size_t *n);

/* One socket a dump found, asked for again by its addresses and ports: a
 * hash lookup in the kernel. Fills *ret with its counters now; -ENOENT when
 * that connection is gone (or its inode is another's now). */
int sockdiag_tcp_lookup(struct sockdiag *d, const struct sockdiag_tcp *known, struct sockdiag_tcp *ret);
