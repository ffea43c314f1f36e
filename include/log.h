/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics to stderr, gated on verbosity (stdout carries data only, since a
 * profile may be written to '-'). libbpf's own messages are routed here by
 * session__libbpf_log() (user/capture/session.c), its debug output shown only at -vv.
 */
#ifndef BPFPROF_LOG_H
#define BPFPROF_LOG_H

#include <stdarg.h>

enum log_level { LOG_WARN = 0, LOG_INFO = 1, LOG_DEBUG = 2 };

/* 0: warnings and the summary; 1 (-v): info; 2 (-vv): debug and libbpf debug. */
extern int log_verbosity;

void log__printf(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(fmt, ...) log__printf(LOG_WARN, "bpfprof: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) log__printf(LOG_INFO, "bpfprof: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) log__printf(LOG_DEBUG, "bpfprof: " fmt, ##__VA_ARGS__)

#endif /* BPFPROF_LOG_H */
