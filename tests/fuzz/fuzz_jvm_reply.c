// SPDX-License-Identifier: MIT
/*
 * libFuzzer harness for user/symbolize/jvm_attach.c's reply parser: any bytes as what
 * a process answered on its attach socket (the JVM's, or whatever else
 * listens there). The status must be the leading decimal number, and a
 * reply is taken only when a newline or the end follows it.
 * Built and run by `make fuzz`; seeds in tests/fuzz/corpus/jvm_reply.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jvm_attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	int status = 12345, ret;
	long long v;
	size_t i = 0;
	char *num;

	ret = jvm_attach__parse_reply(s, size, &status);
	if (ret && ret != -EPROTO)
		__builtin_trap();
	if (ret)
		return 0;
	/* what was taken is "-"? digits, then "\n" or the end */
	if (i < size && s[i] == '-')
		i++;
	while (i < size && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || (i < size && s[i] != '\n'))
		__builtin_trap();
	num = strndup(s, i);
	if (!num)
		return 0;
	v = strtoll(num, NULL, 10);
	free(num);
	if (v != status || v > 999999 || v < -999999)
		__builtin_trap();
	return 0;
}
