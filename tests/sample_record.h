/* SPDX-License-Identifier: MIT */
/*
 * A sample record as the BPF side writes it to the ring buffer
 * (include/bpfprof_abi.h struct bpfprof_sample): one thread, the process's
 * main one, with one user address, for the drivers that feed records to
 * the aggregator or the interval by hand.
 */
#ifndef BPFPROF_TESTS_SAMPLE_RECORD_H
#define BPFPROF_TESTS_SAMPLE_RECORD_H

#include <stdint.h>
#include <string.h>
#include "bpfprof_abi.h"

struct one_ip_sample {
	struct bpfprof_sample s;
	uint64_t room[1]; /* ips[0] */
};

/* The bytes a consumer is given: the header and the one address */
#define ONE_IP_SAMPLE_SIZE (BPFPROF_SAMPLE_HDR_SIZE + 8)

/* rec as process tgid (start time `start`, comm as the kernel pads it) sampled at time_ns in ip */
static inline void one_ip_sample(struct one_ip_sample *rec, uint32_t tgid, uint32_t start,
				 uint64_t time_ns, const char *comm, uint64_t ip)
{
	memset(rec, 0, sizeof(*rec));
	rec->s.type = BPFPROF_REC_SAMPLE;
	rec->s.tgid = rec->s.tid = tgid;
	rec->s.start = start;
	rec->s.time_ns = time_ns;
	memcpy(rec->s.comm, comm, strnlen(comm, sizeof(rec->s.comm)));
	rec->s.nr_user = 1;
	rec->s.ips[0] = ip;
}

#endif /* BPFPROF_TESTS_SAMPLE_RECORD_H */
