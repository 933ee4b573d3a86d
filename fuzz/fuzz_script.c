/* fuzz_script.c - the whole session (read, order, stitch, symbols) on a
 * perf.data file or a stream saved to a file, every sample formatted as
 * `callstitch script` prints it. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_session_opts o = fuzz_session_opts(fuzz_file(data, size));

	fuzz_script(&o);
	return 0;
}
