/* fuzz_pprof.c - the pprof writer fed hostile names (fuzz/names.h): the
 * encoded profile must be well-formed protobuf whose string table holds
 * only UTF-8, as profile.proto's `string` type requires. */
#include "fuzz.h"
#include "names.h"
#include "abi/perf_abi.h"
#include "outputs/pprof.h"

#include <stdlib.h>
#include <string.h>

static uint64_t varint(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			fuzz_fail("fuzz_pprof: varint runs past the end");
		v |= (uint64_t)(**p & 0x7f) << shift;
		if (!(*(*p)++ & 0x80))
			return v;
	}
	fuzz_fail("fuzz_pprof: varint longer than 10 bytes");
}

/* Walks one message; the string table (field 6 of Profile) must be UTF-8. */
static void check_profile(const uint8_t *p, const uint8_t *end, size_t *strings)
{
	while (p < end) {
		uint64_t key = varint(&p, end), len;

		switch (key & 7) {
		case 0:
			varint(&p, end);
			break;
		case 1:
		case 5:
			len = (key & 7) == 1 ? 8 : 4;
			if ((uint64_t)(end - p) < len)
				fuzz_fail("fuzz_pprof: fixed field runs past the end");
			p += len;
			break;
		case 2:
			len = varint(&p, end);
			if (len > (uint64_t)(end - p))
				fuzz_fail("fuzz_pprof: field %llu claims %llu bytes, %td remain",
					  (unsigned long long)(key >> 3),
					  (unsigned long long)len, end - p);
			if (key >> 3 == 6) {
				if (!fuzz_utf8_ok(p, (size_t)len))
					fuzz_fail("fuzz_pprof: string %zu is not UTF-8",
						  *strings);
				++*strings;
			}
			p += len;
			break;
		default:
			fuzz_fail("fuzz_pprof: wire type %llu",
				  (unsigned long long)(key & 7));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cs_pprof_opts po = { .compression = 1 };
	struct cs_pprof_event ev = { .name = "cpu-clock", .freq = 4000 };
	struct names_input in;
	struct names_stack st;
	struct cs_frame frames[NAMES_MAX_FRAMES];
	struct cs_pprof *p;
	uint8_t *buf;
	size_t len, strings = 0;
	uint64_t time = 1000;

	if (names_open(&in, data, size))
		return 0;
	if (cs_pprof_new(&po, &p)) {
		names_close(&in);
		return 0;
	}
	if (in.meta[3] && in.meta[3][0])
		ev.name = in.meta[3];
	while (names_next(&in, &st)) {
		/* innermost first */
		for (size_t i = 0; i < st.nr; i++) {
			const struct names_frame *nf = &st.frames[st.nr - 1 - i];
			struct cs_frame *f = &frames[i];

			memset(f, 0, sizeof(*f));
			f->addr = nf->addr;
			f->cpumode = nf->kernel ? CS_MISC_KERNEL : CS_MISC_USER;
			f->kind = CS_FRAME_ADDR;
			f->loc.sym = nf->name;
			f->loc.dso_name = nf->dso;
			f->loc.kernel = nf->kernel;
			f->loc.map_start = nf->addr & ~0xfffULL;
			f->loc.map_end = f->loc.map_start + 0x1000;
			f->loc.dso_addr = nf->addr - f->loc.map_start;
		}
		if (cs_pprof_add(p, 0, (uint32_t)st.nr, (uint32_t)st.nr + 1,
				 st.comm, time += 250000, frames, st.nr, 250000))
			break;
	}
	if (!cs_pprof_encode(p, &ev, 1, &buf, &len)) {
		check_profile(buf, buf + len, &strings);
		if (!strings)
			fuzz_fail("fuzz_pprof: no string table");
		free(buf);
	}
	cs_pprof_write(p, &ev, 1, fuzz_devnull());
	cs_pprof_free(p);
	names_close(&in);
	return 0;
}
