// SPDX-License-Identifier: MIT
/* Leveled stderr logging (include/log.h); libbpf's messages reach it through session__libbpf_log(). */
#include <stdio.h>
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
