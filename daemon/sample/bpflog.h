/* What libbpf and the kernel's verifier say, for the BPF programs of the
 * sampler (taskiter.c, traffic.c): libbpf's messages go to the debug log,
 * and a refused program's reason into ccxd's own words. */
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
