/* swap.c - records and attrs of a foreign-endian file into native order.
 *
 * The field layouts live in lib/util/bswap_record.c, shared with the
 * writer's big-endian mode; what is the reader's own is how a record finds
 * its event (by an id still in the file's byte order) and when an MMAP2
 * carries a build id.
 */
#include "lib/read/reader_int.h"
#include "lib/read/evlist.h"
#include "lib/read/evlist_int.h"
#include "lib/read/bytes.h"
#include "lib/util/bswap_record.h"

void cs_swap_attr(void *attr, size_t size)
{
	cs_bswap_attr(attr, size);
}

void cs_swap_header(void *rec)
{
	cs_bswap_header(rec);
}

const char *cs_swap_body(const struct cs_evlist *l, void *rec, size_t size)
{
	const uint8_t *b = rec;
	uint32_t type = cs_ld32(b);
	struct cs_bswap_how how = { .dir = CS_BSWAP_TO_NATIVE };
	const struct cs_evsel_layout *lay = NULL;
	const struct cs_evsel *e;

	if (type < CS_RECORD_HEADER_ATTR) {
		e = cs_evlist_event_of_x(l, type, rec, size, 1);
		if (e) {
			lay = cs_evsel_layout(e);
			how.attr = cs_evsel_attr(e);
			how.trailer_size = lay->trailer_size;
		}
	}
	/* the union follows pid, tid, start, len and pgoff */
	if (type == CS_RECORD_MMAP2 && size >= 40)
		how.mmap2_build_id = mmap2_has_build_id(cs_ld16(b + 4), lay,
							b + 40, b + size);
	return cs_bswap_body(&how, type, rec, size);
}
