/* zstream.c - the records inside COMPRESSED/COMPRESSED2 payloads.
 *
 * perf record -z compresses one zstd stream and cuts it into records at
 * arbitrary points, so a decompressed record may start in one payload and
 * end in the next. Each payload is inflated into chunks of at most
 * CHUNK_CAP bytes; a record is handed out from the chunk that holds it
 * whole, or gathered in `carry` when it straddles two chunks. Memory stays
 * bounded however well the data compresses.
 *
 * Inflating ahead (cs_zstream_ahead): a thread walks the mapped data
 * section from the first COMPRESSED record on, inflates each payload it
 * meets into a ring of NR_CHUNKS chunks, and the reader takes them in
 * order. A chunk has one owner at a time: the thread while it fills it,
 * the reader from the moment it is posted until it is given back. Both
 * inflate with inflate_chunk(), payload by payload, so the chunks (and the
 * point where a zstd error shows) are the same with the thread or without.
 * The thread stops at the first outer record whose framing it does not
 * follow (a payload after it, a size it doubts); the reader then takes
 * the stream over and inflates the rest itself.
 */
#include "lib/read/reader_int.h"
#include "lib/read/bytes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define CHUNK_CAP	(1u << 20)
#define NR_CHUNKS	8		/* the thread runs this far ahead */
#define MAX_RECORD	65536u		/* header.size is a u16 */

struct chunk {
	uint8_t *buf;			/* CHUNK_CAP bytes */
	size_t len;
	uint64_t off;			/* the COMPRESSED record it came from */
	bool last;			/* the payload's last chunk */
	bool end;			/* no data: the thread stopped here */
	const char *why;		/* no data: zstd's error */
};

/* One payload being inflated. */
struct payload {
	const uint8_t *in;
	size_t size, pos;
	uint64_t off;
};

struct ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t head;			/* chunks the reader gave back */
	size_t tail;			/* chunks the thread posted */
	bool stop;			/* the reader is done: end now */
	const uint8_t *map;
	uint64_t from, end;
	bool swap;
};

struct cs_zstream {
	ZSTD_DStream *ds;		/* the thread's while it runs */
	struct chunk chunks[NR_CHUNKS];	/* [0] only, without a thread */
	struct ahead *ahead;		/* NULL: the reader inflates */
	struct payload fed;		/* the payload the reader is in */
	struct chunk *cur;		/* the chunk being read, or NULL */
	size_t pos;			/* in cur */
	uint8_t *carry;			/* a record that straddles chunks */
	size_t carry_len;
	uint64_t skip;
	const char *peek_why;		/* a peek's inflate error, not yet told */
};

int cs_zstream_new(struct cs_zstream **out)
{
	struct cs_zstream *z = calloc(1, sizeof(*z));

	if (!z)
		return -ENOMEM;
	z->ds = ZSTD_createDStream();
	z->chunks[0].buf = malloc(CHUNK_CAP);
	z->carry = malloc(MAX_RECORD);
	if (!z->ds || !z->chunks[0].buf || !z->carry) {
		cs_zstream_free(z);
		return -ENOMEM;
	}
	ZSTD_initDStream(z->ds);
	*out = z;
	return 0;
}

/* Inflates the next chunk of payload p into c: as far as the input goes
 * or c holds. A chunk that comes out full may leave output inside zstd
 * even when the input is used up, so only one that does not is last. */
static void inflate_chunk(ZSTD_DStream *ds, struct payload *p, struct chunk *c)
{
	ZSTD_outBuffer o = { c->buf, CHUNK_CAP, 0 };
	ZSTD_inBuffer i = { p->in, p->size, p->pos };
	size_t ret = ZSTD_decompressStream(ds, &o, &i);

	c->off = p->off;
	c->end = false;
	c->why = NULL;
	if (ZSTD_isError(ret)) {
		c->why = ZSTD_getErrorName(ret);
		c->len = 0;
		c->last = true;
		return;
	}
	p->pos = i.pos;
	c->len = o.pos;
	c->last = i.pos == i.size && o.pos < o.size;
}

/* ---- the thread ---------------------------------------------------------- */

/* The slot to fill next, once the reader has given it back; NULL when
 * the reader stopped. */
static struct chunk *ahead_slot(struct cs_zstream *z)
{
	struct ahead *a = z->ahead;
	struct chunk *c = NULL;

	pthread_mutex_lock(&a->lock);
	while (!a->stop && a->tail - a->head == NR_CHUNKS)
		pthread_cond_wait(&a->cond, &a->lock);
	if (!a->stop)
		c = &z->chunks[a->tail % NR_CHUNKS];
	pthread_mutex_unlock(&a->lock);
	return c;
}

/* Hands the slot just filled to the reader. */
static void ahead_post(struct ahead *a)
{
	pthread_mutex_lock(&a->lock);
	a->tail++;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
}

/* Inflates payload p into as many chunks as it takes. Returns false when
 * the thread should end: a zstd error (posted) or the reader stopped. */
static bool ahead_payload(struct cs_zstream *z, struct payload *p)
{
	bool last;

	do {
		struct chunk *c = ahead_slot(z);

		if (!c)
			return false;
		inflate_chunk(z->ds, p, c);
		last = c->last;
		if (c->why) {
			ahead_post(z->ahead);
			return false;
		}
		ahead_post(z->ahead);	/* c is the reader's from here */
	} while (!last);
	return true;
}

/* The outer records from the first COMPRESSED one on, framed as the reader
 * frames them; anything else ends the walk (the reader goes on alone). */
static void *ahead_main(void *arg)
{
	struct cs_zstream *z = arg;
	struct ahead *a = z->ahead;
	uint64_t pos = a->from;
	struct chunk *c;

	while (a->end - pos >= 8) {
		const uint8_t *rec = a->map + pos;
		uint32_t type = cs_ld32x(rec, a->swap);
		uint16_t size = cs_ld16(rec + 6);

		if (a->swap)
			size = __builtin_bswap16(size);
		if (size < 8 || size > a->end - pos ||
		    type == CS_RECORD_AUXTRACE || type == CS_RECORD_HEADER_TRACING_DATA)
			break;
		if (type == CS_RECORD_COMPRESSED || type == CS_RECORD_COMPRESSED2) {
			struct payload p = { .in = rec + 8, .size = size - 8u,
					     .off = pos };

			if (type == CS_RECORD_COMPRESSED2) {
				if (size < 16 || cs_ld64x(rec + 8, a->swap) > size - 16u)
					break;
				p.in = rec + 16;
				p.size = (size_t)cs_ld64x(rec + 8, a->swap);
			}
			if (!ahead_payload(z, &p))
				return NULL;
		}
		pos += size;
	}
	c = ahead_slot(z);
	if (c) {
		c->off = pos;
		c->len = 0;
		c->end = true;
		c->why = NULL;
		ahead_post(a);
	}
	return NULL;
}

int cs_zstream_ahead(struct cs_zstream *z, const void *map, uint64_t from,
		     uint64_t end, bool swap)
{
	struct ahead *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	for (size_t i = 1; i < NR_CHUNKS; i++) {
		if (!z->chunks[i].buf)
			z->chunks[i].buf = malloc(CHUNK_CAP);
		if (!z->chunks[i].buf) {
			free(a);
			return -ENOMEM;
		}
	}
	a->map = map;
	a->from = from;
	a->end = end;
	a->swap = swap;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	z->ahead = a;
	if (pthread_create(&a->thread, NULL, ahead_main, z)) {
		z->ahead = NULL;
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		free(a);
		return -EAGAIN;
	}
	return 0;
}

/* Ends the thread (at once, if it is still inflating) and takes the
 * stream back: the chunks and zstd's state are the reader's again. */
static void ahead_end(struct cs_zstream *z)
{
	struct ahead *a = z->ahead;

	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	free(a);
	z->ahead = NULL;
}

/* ---- the reader's side --------------------------------------------------- */

void cs_zstream_free(struct cs_zstream *z)
{
	if (!z)
		return;
	if (z->ahead)
		ahead_end(z);
	ZSTD_freeDStream(z->ds);
	for (size_t i = 0; i < NR_CHUNKS; i++)
		free(z->chunks[i].buf);
	free(z->carry);
	free(z);
}

void cs_zstream_feed(struct cs_zstream *z, uint64_t off, const void *in,
		     size_t size)
{
	z->fed.in = in;
	z->fed.size = size;
	z->fed.pos = 0;
	z->fed.off = off;
}

/* Gives the chunk being read back (to the thread, if there is one). */
static void put_chunk(struct cs_zstream *z)
{
	struct ahead *a = z->ahead;

	z->cur = NULL;
	z->pos = 0;
	if (a) {
		pthread_mutex_lock(&a->lock);
		a->head++;
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
	}
}

/* The thread's next chunk, once it is posted. */
static struct chunk *ahead_take(struct cs_zstream *z)
{
	struct ahead *a = z->ahead;
	struct chunk *c;

	pthread_mutex_lock(&a->lock);
	while (a->head == a->tail)
		pthread_cond_wait(&a->cond, &a->lock);
	c = &z->chunks[a->head % NR_CHUNKS];
	pthread_mutex_unlock(&a->lock);
	return c;
}

/* The next chunk of the payload fed last, into cur. Returns 0, or
 * -EBADMSG with *why. */
static int get_chunk(struct cs_zstream *z, const char **why)
{
	struct chunk *c = NULL;

	if (z->ahead) {
		c = ahead_take(z);
		if (!c->end && c->off != z->fed.off) {
			*why = "inflated ahead for another record (a bug)";
			ahead_end(z);
			return -EBADMSG;
		}
		if (c->end || c->why)	/* the thread is done */
			ahead_end(z);
		if (c->end)		/* it went no further: we go on */
			c = NULL;
	}
	if (!c) {
		c = &z->chunks[0];
		inflate_chunk(z->ds, &z->fed, c);
	}
	z->cur = c;
	z->pos = 0;
	if (c->why) {
		*why = c->why;
		return -EBADMSG;
	}
	return 0;
}

static uint16_t record_size(const uint8_t *rec, bool swap)
{
	uint16_t sz = cs_ld16(rec + 6);

	return swap ? __builtin_bswap16(sz) : sz;
}

/* Copies into carry what the record begun there still needs from cur.
 * Returns its size once it is whole, 0 while it needs more, or -EBADMSG. */
static int gather(struct cs_zstream *z, bool swap, const char **why)
{
	size_t want = z->carry_len < 8 ? 8 : record_size(z->carry, swap);
	size_t avail = z->cur->len - z->pos;
	size_t n = want - z->carry_len < avail ? want - z->carry_len : avail;

	memcpy(z->carry + z->carry_len, z->cur->buf + z->pos, n);
	z->carry_len += n;
	z->pos += n;
	if (z->carry_len < want)
		return 0;
	if (want == 8) {		/* the header is whole: now the size */
		want = record_size(z->carry, swap);
		if (want < 8) {
			*why = "decompressed record claims under 8 bytes";
			return -EBADMSG;
		}
		if (want > 8)
			return 0;
	}
	z->carry_len = 0;
	return (int)want;
}

int cs_zstream_next(struct cs_zstream *z, bool swap, void **rec,
		    size_t *size, const char **why)
{
	if (z->peek_why) {
		*why = z->peek_why;
		return -EBADMSG;
	}
	for (;;) {
		size_t avail = z->cur ? z->cur->len - z->pos : 0;
		int err;

		if (z->skip && avail) {
			size_t n = avail < z->skip ? avail : (size_t)z->skip;

			z->pos += n;
			z->skip -= n;
			avail -= n;
		}
		if (!z->skip && avail) {
			uint8_t *at = z->cur->buf + z->pos;

			if (!z->carry_len && avail >= 8) {
				uint16_t sz = record_size(at, swap);

				if (sz < 8) {
					*why = "decompressed record claims under 8 bytes";
					return -EBADMSG;
				}
				if (avail >= sz) {
					*rec = at;
					*size = sz;
					z->pos += sz;
					return 1;
				}
			}
			err = gather(z, swap, why);
			if (err < 0)
				return err;
			if (err > 0) {
				*rec = z->carry;
				*size = (size_t)err;
				return 1;
			}
			continue;
		}
		/* cur is used up: the payload's next chunk, or its end */
		if (z->cur) {
			bool last = z->cur->last;

			put_chunk(z);
			if (last)
				return 0;
		}
		err = get_chunk(z, why);
		if (err)
			return err;
	}
}

/* Reading ahead asks before every record whether it may read it on its
 * thread. The answer takes cs_zstream_next()'s steps up to the record,
 * not the record itself: a payload's next chunk is inflated here, and a
 * record that runs past the chunk is gathered into carry, as that call
 * would, so that the question does not hand every chunk back. A record
 * that the payload leaves half-done is not what comes next: the outer
 * record that brings the rest is. */
int cs_zstream_peek_type(struct cs_zstream *z)
{
	uint8_t head[8];

	for (;;) {
		size_t avail = z->cur ? z->cur->len - z->pos : 0;
		size_t have, size;
		const uint8_t *h;
		const char *why = NULL;

		if (z->peek_why || z->skip)
			return -1;
		if (!avail) {
			if (z->cur && z->cur->last)
				return CS_ZSTREAM_PAYLOAD_DONE;
			if (z->cur)
				put_chunk(z);
			if (get_chunk(z, &why)) {
				z->peek_why = why;
				return -1;
			}
			continue;
		}
		/* the header, where it is whole: in the chunk, as nearly
		 * always, or begun in carry when split between chunks */
		h = z->cur->buf + z->pos;
		if (z->carry_len) {
			have = z->carry_len < sizeof(head) ? z->carry_len :
							     sizeof(head);
			memcpy(head, z->carry, have);
			if (have < sizeof(head))
				memcpy(head + have, h,
				       avail < sizeof(head) - have ? avail :
				       sizeof(head) - have);
			h = head;
		}
		if (z->carry_len + avail >= sizeof(head)) {
			size = cs_ld16(h + 6);
			if (size < 8)
				return -1;	/* the read says why */
			if (z->carry_len + avail >= size)
				return (int)(cs_ld32(h) > 0xffff ? 0xffff :
					     cs_ld32(h));
		}
		if (z->cur->last)
			return CS_ZSTREAM_PAYLOAD_DONE;
		/* it runs on in the payload's next chunk: all of this one is
		 * its, and cannot finish it */
		if (gather(z, false, &why) < 0) {
			z->peek_why = why;
			return -1;
		}
	}
}

size_t cs_zstream_pending(const struct cs_zstream *z)
{
	size_t in_cur = z->cur ? z->cur->len - z->pos : 0;

	return z->carry_len + in_cur + (size_t)z->skip;
}

int cs_zstream_skip(struct cs_zstream *z, uint64_t n)
{
	z->skip += n;
	return 0;
}
