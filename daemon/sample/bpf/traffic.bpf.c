/* Exact traffic counters: the bytes and the calls that moved them, per
 * queue (what one side writes into and the other reads out of: a pipe, a
 * Unix socket's receive queue, one direction of a TCP connection), process
 * and direction, counted where the kernel moves them
 * (daemon/sample/traffic.c reads them):
 *
 *   pipes    fexit of anon_pipe_write() and anon_pipe_read() (pipe_write()
 *            and pipe_read() in older kernels: the loader picks), the
 *            write_iter and read_iter of every anonymous pipe;
 *   splice   fexit of do_splice(), splice(2) into or out of a pipe, which
 *            does not go through those two;
 *   sockets  the tracepoints sock_send_length and sock_recv_length
 *            (Linux 6.3), every sendmsg and recvmsg of a Unix or a TCP
 *            socket: send(2), recv(2), write(2), read(2) and the rest;
 *   pipes at system calls' exit
 *            where a kernel refuses the fexit programs (some refuse them
 *            even to root, and allow tracepoints): the raw tracepoint
 *            sys_exit, the system calls that move data through a pipe
 *            (x86-64 only). It runs at the exit of every system call of
 *            every process, which costs them all a little: only in place of
 *            the fexit programs, and only when the loader is asked to.
 *
 * A process that ccxd thins (traffic_thin(): a kept group that makes many
 * calls) is counted one call in 16, each counted call standing for 16.
 *
 * The kernel's structures it reads are declared in ../../bpf/kernel.h, or
 * here when no other program reads them. */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "../../bpf/kernel.h"
#include "../traffic-records.h"

#define PIPEFS_MAGIC 0x50495045
#define MSG_PEEK 2
#define MAX_PID_NS_LEVEL 32
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6

struct kiocb {
	struct file *ki_filp;
} __attribute__((preserve_access_index));
struct socket {
	struct file *file;
} __attribute__((preserve_access_index));
struct in6_addr {
	__u32 words[4];
};
/* The members in anonymous unions are found there: CO-RE looks into them. */
struct sock_common {
	__u32 skc_daddr;           /* IPv4, network order */
	__u32 skc_rcv_saddr;
	__u16 skc_dport;           /* network order */
	__u16 skc_num;             /* host order */
	unsigned short skc_family;
	struct in6_addr skc_v6_daddr;
	struct in6_addr skc_v6_rcv_saddr;
} __attribute__((preserve_access_index));
struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
	struct socket *sk_socket;
} __attribute__((preserve_access_index));
struct unix_sock {
	struct sock *peer;
} __attribute__((preserve_access_index));
struct pt_regs {                   /* x86-64's: the system call's number and arguments */
	unsigned long di, dx, orig_ax;
} __attribute__((preserve_access_index));

const volatile struct traffic_config config = { 0 };

/* Two counts maps: the programs count into the one that shared.generation
 * names, the reader turns the generation and reads the other. A program
 * says it is at work in a map (shared.inflight) before it looks at the
 * generation again, and the reader waits for none to be at work in the map
 * it turned from before it reads it: no count is lost at a read, none is
 * torn, and nobody waits for more than the programs already running (not
 * for an RCU grace period, which a map-in-map's update from user space
 * waits for: up to tenths of a second on a loaded machine). */
struct counts {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TRAFFIC_ENTRIES);
	__type(key, struct traffic_key);
	__type(value, struct traffic_value);
} counts_0 SEC(".maps"), counts_1 SEC(".maps");

struct traffic_shared shared;

/* The current process's pid as the reader numbers it, in its pid namespace;
 * 0 for a process outside it (the reader cannot see it). */
static __always_inline __u32 current_pid(void) {
	struct task_struct *t;
	unsigned long p, numbers;
	unsigned int level;

	if (!config.pidns_inum)
		return (__u32)(bpf_get_current_pid_tgid() >> 32);
	/* In a container: the number that the reader's namespace gives the
	 * process (struct pid's numbers[], one per level down to the
	 * process's own namespace), searched from the deepest. */
	t = bpf_get_current_task_btf();
	p = (unsigned long)BPF_CORE_READ(t, group_leader, thread_pid);
	if (!p)
		return 0;
	level = BPF_CORE_READ((struct pid *)p, level);
	numbers = p + bpf_core_field_offset(struct pid, numbers);
	for (int i = 0; i < MAX_PID_NS_LEVEL; i++) {
		unsigned long at = numbers + (level - i) * bpf_core_type_size(struct upid);
		struct upid up;
		if (i > (int)level || bpf_probe_read_kernel(&up, sizeof(up), (void *)at) < 0)
			break;
		if (BPF_CORE_READ(up.ns, ns.inum) == config.pidns_inum)
			return (__u32)up.nr;
	}
	return 0;
}

static __always_inline void add(void *counts, const struct traffic_key *key, __u64 bytes, __u32 calls) {
	struct traffic_value zero = { 0 }, *v = bpf_map_lookup_elem(counts, key);

	if (!v) {
		/* -EEXIST when another CPU added it meanwhile: then it is there. */
		bpf_map_update_elem(counts, key, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(counts, key);
		if (!v) {   /* full */
			__sync_fetch_and_add(&shared.lost, 1);
			return;
		}
	}
	__sync_fetch_and_add(&v->bytes, bytes);
	__sync_fetch_and_add(&v->messages, calls);
}

/* The processes counted one call in TRAFFIC_THIN_EVERY: a bit each, by pid
 * (traffic_thin()). An array map, whose lookup the verifier inlines: a
 * process that is not thinned pays a load and a test. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);    /* set by the loader from pid_max */
	__type(key, __u32);
	__type(value, __u64);
} thinned SEC(".maps");

/* Who the current process's calls are counted for (0: nobody, this one is
 * not counted), and how many calls each counted one stands for: 1, or for
 * a thinned process TRAFFIC_THIN_EVERY, one call at random in that many
 * counted for all of them. Looked at before anything is read of what the
 * call moved through, which a thinned process's other calls are spared. */
static __always_inline __u32 counted_pid(__u32 *weight) {
	__u32 pid = current_pid(), word = pid / 64;
	__u64 *bits;

	*weight = 1;
	if (!pid)
		return 0;
	bits = bpf_map_lookup_elem(&thinned, &word);
	if (bits && (*bits >> (pid % 64)) & 1) {
		if (bpf_get_prandom_u32() % TRAFFIC_THIN_EVERY)
			return 0;
		*weight = TRAFFIC_THIN_EVERY;
	}
	return pid;
}

static __always_inline void count(__u32 pid, __u32 weight, __u64 queue, __u8 kind, __u8 direction, long moved) {
	struct traffic_key key = { .queue = queue, .pid = pid, .kind = kind, .direction = direction };
	__u32 generation;

	if (!queue)
		return;
	/* At work in a map first, then the generation looked at again: the
	 * reader, which turns the generation first and then looks at what is
	 * at work, either sees this program at work or is seen to have turned
	 * (the atomic additions are full barriers). It turns once a sample. */
	generation = shared.generation & 1;
	__sync_fetch_and_add(&shared.inflight[generation], 1);
	if ((shared.generation & 1) != generation) {
		__sync_fetch_and_add(&shared.inflight[generation], -1);
		generation = !generation;
		__sync_fetch_and_add(&shared.inflight[generation], 1);
	}
	add(generation ? (void *)&counts_1 : (void *)&counts_0, &key, (__u64)moved * weight, weight);
	__sync_fetch_and_add(&shared.inflight[generation], -1);
}

/* An anonymous pipe's inode, as /proc shows it (pipe:[INODE]); 0 for
 * another file, a FIFO among them (its inode is its file system's). */
static __always_inline __u64 pipe_inode(struct file *f) {
	struct inode *inode = BPF_CORE_READ(f, f_inode);

	if (!inode || BPF_CORE_READ(inode, i_sb, s_magic) != PIPEFS_MAGIC)
		return 0;
	return BPF_CORE_READ(inode, i_ino);
}

/* What a call moved through pipe f (another file: not counted). */
static __always_inline void count_pipe(struct file *f, __u8 direction, long moved) {
	__u32 pid, weight;

	if (moved > 0 && (pid = counted_pid(&weight)))
		count(pid, weight, pipe_inode(f), TRAFFIC_REC_PIPE, direction, moved);
}

SEC("fexit/anon_pipe_write")
int BPF_PROG(pipe_write, struct kiocb *iocb, struct iov_iter *from, long ret) {
	count_pipe(iocb->ki_filp, TRAFFIC_REC_WRITE, ret);
	return 0;
}

SEC("fexit/anon_pipe_read")
int BPF_PROG(pipe_read, struct kiocb *iocb, struct iov_iter *to, long ret) {
	count_pipe(iocb->ki_filp, TRAFFIC_REC_READ, ret);
	return 0;
}

/* splice(2) (and io_uring's): out of in, into out. A pipe at either end is
 * counted here; a socket at the other is counted by its sendmsg (splice
 * into a socket), or not at all (out of a socket: no recvmsg). */
SEC("fexit/do_splice")
int BPF_PROG(splice, struct file *in, void *off_in, struct file *out, void *off_out, unsigned long len,
	     unsigned int flags, long ret) {
	count_pipe(in, TRAFFIC_REC_READ, ret);
	count_pipe(out, TRAFFIC_REC_WRITE, ret);
	return 0;
}

static __always_inline __u64 mix(__u64 x) {
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* A TCP endpoint: an IPv4 address as the IPv4-mapped IPv6 one, so that
 * both ends of a connection between an IPv4 and a dual-stack socket name
 * it alike. */
static __always_inline __u64 endpoint(const __u32 *words, __u16 port) {
	return mix(mix(((__u64)words[0] << 32 | words[1]) ^ port) ^ ((__u64)words[2] << 32 | words[3]));
}

/* The socket programs run at every send and receive, which a ping-pong
 * pair on one CPU makes hundreds of thousands a second: what they read of
 * the socket they read with plain loads. Their tracepoints are tp_btf ones,
 * whose arguments the kernel's BTF types, so the verifier lets a program
 * follow those pointers itself (each load guarded, reading 0 at a bad
 * address) where BPF_CORE_READ() calls a helper per field: 155 ns a TCP
 * call became 105 (BENCHMARKS.md, "Traffic counters"). */
static __always_inline __u64 tcp_queue(struct sock *sk, __u8 direction) {
	struct sock_common *c = &sk->__sk_common;
	__u32 local[4] = { 0, 0, 0xffff0000 /* ::ffff:0:0/96, network order */, c->skc_rcv_saddr };
	__u32 remote[4] = { 0, 0, 0xffff0000, c->skc_daddr };
	__u64 to, from, q;

	if (c->skc_family == AF_INET6) {
		const __u32 *l = c->skc_v6_rcv_saddr.words;
		if (!(l[0] == 0 && l[1] == 0 && l[2] == 0xffff0000)) {
			const __u32 *r = c->skc_v6_daddr.words;
			for (int i = 0; i < 4; i++) {
				local[i] = l[i];
				remote[i] = r[i];
			}
		}
	}
	to = endpoint(remote, __builtin_bswap16(c->skc_dport));
	from = endpoint(local, c->skc_num);
	if (direction == TRAFFIC_REC_READ) {   /* the data came from the remote end */
		__u64 swap = to;
		to = from;
		from = swap;
	}
	q = mix(to ^ mix(from + 1));   /* not symmetric: one direction of the connection */
	return q ? q : 1;
}

/* A read-only view of obj as the kernel's type btf_id (Linux 6.2; the
 * socket tracepoints that use it came in 6.3). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/* The inode of sk's file. */
static __always_inline __u64 sock_inode(struct sock *sk) {
	struct socket *s = sk ? sk->sk_socket : NULL;
	struct file *f = s ? s->file : NULL;
	struct inode *i = f ? f->f_inode : NULL;

	return i ? i->i_ino : 0;
}

/* The queue that what moved went through: a Unix socket's receiving end's
 * inode (the peer's when sending; a datagram sent to an address, without a
 * peer, is not counted), or one direction of a TCP connection, named the
 * same by both its ends. Other sockets are not counted. */
static __always_inline void count_socket(struct sock *sk, __u8 direction, int moved) {
	unsigned short family;
	__u32 pid, weight;

	if (moved <= 0 || !(pid = counted_pid(&weight)))
		return;
	family = sk->__sk_common.skc_family;
	if (family == AF_UNIX) {
		struct sock *to = sk;
		if (direction == TRAFFIC_REC_WRITE)
			to = ((struct unix_sock *)bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct unix_sock)))->peer;
		count(pid, weight, sock_inode(to), TRAFFIC_REC_UNIX, direction, moved);
	} else if ((family == AF_INET || family == AF_INET6) && sk->sk_protocol == IPPROTO_TCP) {
		count(pid, weight, tcp_queue(sk, direction), TRAFFIC_REC_TCP, direction, moved);
	}
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(sock_send, struct sock *sk, int ret, int flags) {
	count_socket(sk, TRAFFIC_REC_WRITE, ret);
	return 0;
}

/* A peek leaves the data for the read that follows it. */
SEC("tp_btf/sock_recv_length")
int BPF_PROG(sock_recv, struct sock *sk, int ret, int flags) {
	if (!(flags & MSG_PEEK))
		count_socket(sk, TRAFFIC_REC_READ, ret);
	return 0;
}

/* ---- pipes at system calls' exit ----------------------------------- */

#define TS_COMPAT 0x0002
#define NR_read 0
#define NR_write 1
#define NR_readv 19
#define NR_writev 20
#define NR_sendfile 40
#define NR_splice 275
#define NR_preadv2 327
#define NR_pwritev2 328

/* The current process's file at fd (NULL where none): what the system call
 * that returns moved data through. Another thread could have closed it and
 * opened another there meanwhile: the window is the system call's return. */
static __always_inline struct file *file_of(unsigned long fd) {
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	struct file *f = NULL;

	if (!fds || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	bpf_probe_read_kernel(&f, sizeof(f), fds + fd);
	return f;
}

/* read(2), write(2), their vectored forms, sendfile(2) into a pipe and
 * splice(2); the system calls that fail on a pipe (pread64(2), preadv(2)
 * and theirs) left out. Not io_uring, nor vmsplice(2) or tee(2). */
SEC("tp_btf/sys_exit")
int BPF_PROG(pipe_syscalls, struct pt_regs *regs, long ret) {
	struct task_struct *t;
	__u32 pid, weight;
	long nr;

	if (ret <= 0)
		return 0;
	nr = (long)regs->orig_ax;
	if (nr != NR_read && nr != NR_write && nr != NR_readv && nr != NR_writev && nr != NR_sendfile &&
	    nr != NR_splice && nr != NR_preadv2 && nr != NR_pwritev2)
		return 0;
	t = bpf_get_current_task_btf();
	if (BPF_CORE_READ(t, thread_info.status) & TS_COMPAT)   /* other numbers, other registers */
		return 0;
	pid = counted_pid(&weight);
	if (!pid)
		return 0;
	if (nr == NR_read || nr == NR_readv || nr == NR_preadv2 || nr == NR_splice)
		count(pid, weight, pipe_inode(file_of(regs->di)), TRAFFIC_REC_PIPE, TRAFFIC_REC_READ, ret);
	if (nr == NR_write || nr == NR_writev || nr == NR_pwritev2 || nr == NR_sendfile)
		count(pid, weight, pipe_inode(file_of(regs->di)), TRAFFIC_REC_PIPE, TRAFFIC_REC_WRITE, ret);
	if (nr == NR_splice)   /* splice(fd_in, off_in, fd_out, ...) */
		count(pid, weight, pipe_inode(file_of(regs->dx)), TRAFFIC_REC_PIPE, TRAFFIC_REC_WRITE, ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
