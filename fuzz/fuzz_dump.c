/* fuzz_dump.c - `callstitch dump`: every record decoded in file order,
 * with the raw bytes on odd-sized inputs. */
#include "fuzz.h"
#include "lib/read/reader.h"
#include "lib/util/errbuf.h"
#include "outputs/dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_dump_opts o = { .hex = size & 1 };
	struct cs_errbuf eb = { { 0 } };
	struct cs_reader *r;

	if (cs_reader_open("fuzz.data", fuzz_file(data, size), &eb, &r))
		return 0;
	cs_dump(r, fuzz_devnull(), &o, NULL, &eb);
	cs_reader_free(r);
	return 0;
}
