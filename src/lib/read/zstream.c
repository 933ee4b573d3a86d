/* zstream.c - the records inside COMPRESSED/COMPRESSED2 payloads.
 *
 * perf record -z compresses one zstd stream and cuts it into records at
 * arbitrary points, so a decompressed record may start in one payload and
 * end in the next. We decompress into a fixed buffer only as far as needed
 * for the next whole record: memory stays bounded (a record is at most
 * 64 KiB) however well the data compresses.
 */
#include "lib/read/reader_int.h"
#include "lib/read/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define ZOUT_CAP (1u << 20)

struct cs_zstream {
	ZSTD_DStream *ds;
	const uint8_t *in;
	size_t in_size, in_pos;
	uint8_t *out;
	size_t start, end;
	uint64_t skip;
};

int cs_zstream_new(struct cs_zstream **out)
{
	struct cs_zstream *z = calloc(1, sizeof(*z));

	if (!z)
		return -ENOMEM;
	z->ds = ZSTD_createDStream();
	z->out = malloc(ZOUT_CAP);
	if (!z->ds || !z->out) {
		cs_zstream_free(z);
		return -ENOMEM;
	}
	ZSTD_initDStream(z->ds);
	*out = z;
	return 0;
}

void cs_zstream_free(struct cs_zstream *z)
{
	if (!z)
		return;
	ZSTD_freeDStream(z->ds);
	free(z->out);
	free(z);
}

void cs_zstream_feed(struct cs_zstream *z, const void *in, size_t size)
{
	z->in = in;
	z->in_size = size;
	z->in_pos = 0;
}

/* Decompresses more. Returns 1 if output grew, 0 if the payload is used
 * up, -EBADMSG on corrupt data. */
static int more(struct cs_zstream *z, const char **why)
{
	size_t avail = z->end - z->start;
	ZSTD_outBuffer o;
	ZSTD_inBuffer i;
	size_t ret;

	if (z->in_pos >= z->in_size)
		return 0;
	if (z->start) {
		memmove(z->out, z->out + z->start, avail);
		z->start = 0;
		z->end = avail;
	}
	o.dst = z->out;
	o.size = ZOUT_CAP;
	o.pos = z->end;
	i.src = z->in;
	i.size = z->in_size;
	i.pos = z->in_pos;
	ret = ZSTD_decompressStream(z->ds, &o, &i);
	if (ZSTD_isError(ret)) {
		*why = ZSTD_getErrorName(ret);
		return -EBADMSG;
	}
	z->in_pos = i.pos;
	z->end = o.pos;
	return 1;
}

int cs_zstream_next(struct cs_zstream *z, bool swap, void **rec,
		    size_t *size, const char **why)
{
	for (;;) {
		size_t avail = z->end - z->start;
		int err;

		if (z->skip) {
			size_t n = avail < z->skip ? avail : (size_t)z->skip;

			z->start += n;
			z->skip -= n;
			avail -= n;
		}
		if (!z->skip && avail >= 8) {
			uint16_t sz = cs_ld16(z->out + z->start + 6);

			if (swap)
				sz = __builtin_bswap16(sz);
			if (sz < 8) {
				*why = "decompressed record claims under 8 bytes";
				return -EBADMSG;
			}
			if (avail >= sz) {
				*rec = z->out + z->start;
				*size = sz;
				z->start += sz;
				return 1;
			}
		}
		err = more(z, why);
		if (err <= 0)
			return err;
	}
}

size_t cs_zstream_pending(const struct cs_zstream *z)
{
	return z->end - z->start + (size_t)z->skip;
}

int cs_zstream_skip(struct cs_zstream *z, uint64_t n)
{
	z->skip += n;
	return 0;
}
