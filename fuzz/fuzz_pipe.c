/* fuzz_pipe.c - a stream read from a real pipe (perf record -o - | ...),
 * shown unmerged: samples with their cookies and each DEFERRED CALLCHAIN
 * record. The input is written into the pipe whole before reading starts,
 * so it is cut to the pipe's capacity (1 MiB where the system allows).
 * Inputs of odd length are read ahead, on a thread of their own. */
#include "fuzz.h"

#include <fcntl.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_session_opts o;
	int p[2], cap;

	if (pipe2(p, O_CLOEXEC))
		fuzz_fail("fuzz_pipe: pipe: no file descriptors left");
	cap = fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	if (cap < 0)
		cap = fcntl(p[1], F_GETPIPE_SZ);
	if (size > (size_t)cap)
		size = (size_t)cap;
	if (size && write(p[1], data, size) != (ssize_t)size)
		fuzz_fail("fuzz_pipe: the pipe took less than its capacity");
	close(p[1]);
	o = fuzz_session_opts(p[0]);
	o.no_merge = true;
	/* an input of odd length is read on a thread ahead, which asks the
	 * reader for each record's type before it reads it */
	o.read_ahead = size & 1;
	fuzz_script(&o);
	close(p[0]);
	return 0;
}
