/* fuzz_zstd.c - zstd-compressed records (perf record -z), built from the
 * input so that the compressed data is real zstd and the fuzzer's changes
 * land in the records inside it.
 *
 * Input: one selector byte, then a stream (pipe-mode perf.data). The
 * stream's header and its leading HEADER_* records are kept as they are;
 * everything after them is compressed, in chunks of 512 B to 32 KiB (so
 * records straddle payloads), into COMPRESSED2 records, or COMPRESSED ones
 * with bit 7 of the selector. Bit 6 ends a zstd frame with each payload;
 * otherwise one frame spans them all, as perf writes it. The result is
 * read as a stream saved to a file and printed as `script` does; a stream
 * of odd length is read ahead, on a thread of its own.
 */
#include "fuzz.h"
#include "abi/perf_abi.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* End of the leading records perf synthesizes before the data (types 64
 * and up other than the compressed ones), all of them whole. */
static size_t leading_records(const uint8_t *s, size_t size)
{
	size_t at = size < 16 ? size : 16;

	while (size - at >= 8) {
		uint32_t type;
		uint16_t rsize;

		memcpy(&type, s + at, 4);
		memcpy(&rsize, s + at + 6, 2);
		if (type < CS_RECORD_HEADER_ATTR || type == CS_RECORD_COMPRESSED ||
		    type == CS_RECORD_COMPRESSED2 || rsize < 8 || rsize > size - at)
			break;
		at += rsize;
	}
	return at;
}

static size_t put_record(uint8_t *out, uint32_t type, const void *payload,
			 size_t n)
{
	struct cs_perf_event_header h = { .type = type };
	size_t body = type == CS_RECORD_COMPRESSED2 ? 8 : 0;
	size_t total = sizeof(h) + body + n;
	uint64_t data_size = n;

	if (type == CS_RECORD_COMPRESSED2)
		total = (total + 7) & ~(size_t)7;
	h.size = (uint16_t)total;
	memcpy(out, &h, sizeof(h));
	if (body)
		memcpy(out + sizeof(h), &data_size, 8);
	memcpy(out + sizeof(h) + body, payload, n);
	memset(out + sizeof(h) + body + n, 0, total - sizeof(h) - body - n);
	return total;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ZSTD_CCtx *cctx;
	static uint8_t zbuf[65536];
	struct cs_session_opts o;
	size_t head, chunk, len, cap;
	uint32_t type;
	bool frame_each;
	uint8_t *out;

	if (!size)
		return 0;
	chunk = ((size_t)(data[0] & 0x3f) + 1) * 512;
	frame_each = data[0] & 0x40;
	type = data[0] & 0x80 ? CS_RECORD_COMPRESSED : CS_RECORD_COMPRESSED2;
	data++, size--;
	if (!cctx && !(cctx = ZSTD_createCCtx()))
		fuzz_fail("fuzz_zstd: no memory for a zstd context");
	ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);

	head = leading_records(data, size);
	cap = head + ZSTD_compressBound(size) + ((size - head) / chunk + 1) * 64;
	out = malloc(cap);
	if (!out)
		return 0;
	memcpy(out, data, head);
	len = head;
	for (size_t at = head; at < size; at += chunk) {
		size_t n = size - at < chunk ? size - at : chunk;
		ZSTD_inBuffer in = { data + at, n, 0 };
		ZSTD_outBuffer zo = { zbuf, sizeof(zbuf) - 24, 0 };
		bool last = at + n == size;
		size_t left;

		left = ZSTD_compressStream2(cctx, &zo, &in, frame_each || last ?
					    ZSTD_e_end : ZSTD_e_flush);
		if (ZSTD_isError(left) || left || in.pos != n)
			fuzz_fail("fuzz_zstd: zstd did not take a %zu-byte chunk", n);
		len += put_record(out + len, type, zbuf, zo.pos);
	}
	o = fuzz_session_opts(fuzz_file(out, len));
	/* a stream of odd length is read on a thread ahead, which asks the
	 * reader for each record's type, inflating and gathering to tell */
	o.read_ahead = size & 1;
	fuzz_script(&o);
	free(out);
	return 0;
}
