/* What ccxd's three BPF loaders share (the exec programs, events/execs.c;
 * the sampler's iterators and traffic counters, sample/taskiter.c and
 * sample/traffic.c): an object built into ccxd, opened with a verifier log
 * of ccxd's own and loaded; libbpf's messages to the debug log, and a
 * refused program's reason in ccxd's own words. */
#pragma once

#include <stdarg.h>
#include <stddef.h>
#include <bpf/libbpf.h>

/* For libbpf_set_print(): warnings and information to the debug log
 * (they say why a program is not loaded), libbpf's debug chatter nowhere. */
int bpflog_print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* The verifier's own word on a refused program, from its log: the last
 * line before the statistics, as "; the verifier: ...", or "" where it said
 * nothing more (a refusal before it looked at the program). */
void bpflog_verifier_said(const char *log, char *said, size_t size);

/* The verifier's log of a refused program: a buffer of the caller's, of
 * this size and zeroed, rather than libbpf's, since the kernel fills it in
 * bpf(2), which memcheck cannot see, and would take libbpf's for
 * uninitialised. */
#define BPFLOG_SIZE (64 * 1024)

/* The object of size bytes at bytes, opened with log (BPFLOG_SIZE) as the
 * verifier's. NULL, with errno, when libbpf cannot open it. */
struct bpf_object *bpflog_open(const char *bytes, size_t size, char *log);

/* Loads obj; when the kernel refuses it, the verifier's log (log, as given
 * to bpflog_open()) goes to the debug log. 0 or -errno. */
int bpflog_load(struct bpf_object *obj, const char *log);
