// SPDX-License-Identifier: MIT
/* Leveled stderr logging and the libbpf print bridge (bcc libbpf_print_fn). */
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

int log_verbosity;

void log__printf(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > log_verbosity)
		return;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings are demoted to info: bpfprof reports the failure itself. */
	int need = level == LIBBPF_DEBUG ? LOG_DEBUG : LOG_INFO;

	if (need > log_verbosity)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void log__libbpf_bridge(void)
{
	libbpf_set_print(libbpf_print);
}
