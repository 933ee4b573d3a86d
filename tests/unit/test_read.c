/* test_read.c - the reader: a file, the same profile as a stream, the
 * same profile written big-endian and compressed all give the same
 * records; truncation and corruption give an error with an offset; a file
 * whose recorder died is read up to its last whole record.
 *
 * Profiles are built here by an emitter that writes each field in the
 * chosen byte order, independently of the reader's own swap code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mman.h>
#include <zstd.h>
#include <cmocka.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"
#include "lib/read/reader.h"
#include "lib/read/decode.h"
#include "lib/read/evlist.h"
#include "lib/util/errbuf.h"

/* ---- an emitter of either byte order ---- */

struct em {
	uint8_t *b;
	size_t len, cap;
	bool be;
};

static void grow(struct em *e, size_t n)
{
	if (e->len + n > e->cap) {
		e->cap = (e->len + n) * 2 + 256;
		e->b = realloc(e->b, e->cap);
		assert_non_null(e->b);
	}
}

static void eb(struct em *e, const void *p, size_t n)
{
	grow(e, n);
	memcpy(e->b + e->len, p, n);
	e->len += n;
}

static void ezero(struct em *e, size_t n)
{
	grow(e, n);
	memset(e->b + e->len, 0, n);
	e->len += n;
}

static void e64(struct em *e, uint64_t v)
{
	if (e->be)
		v = __builtin_bswap64(v);
	eb(e, &v, 8);
}

static void e32(struct em *e, uint32_t v)
{
	if (e->be)
		v = __builtin_bswap32(v);
	eb(e, &v, 4);
}

static void e16(struct em *e, uint16_t v)
{
	if (e->be)
		v = __builtin_bswap16(v);
	eb(e, &v, 2);
}

static void e64_at(struct em *e, size_t at, uint64_t v)
{
	if (e->be)
		v = __builtin_bswap64(v);
	memcpy(e->b + at, &v, 8);
}

static void epad8(struct em *e)
{
	ezero(e, (8 - e->len % 8) % 8);
}

static size_t rbegin(struct em *e, uint32_t type, uint16_t misc)
{
	size_t at = e->len;

	e32(e, type);
	e16(e, misc);
	e16(e, 0);
	return at;
}

static void rend(struct em *e, size_t at)
{
	uint16_t size = (uint16_t)(e->len - at);

	if (e->be)
		size = __builtin_bswap16(size);
	memcpy(e->b + at + 6, &size, 2);
}

/* A big-endian compiler allocates bitfields from the most significant
 * bit: byte k of the flag word holds the same flags, bit order reversed. */
static uint8_t rev(uint8_t b)
{
	uint8_t r = 0;

	for (int i = 0; i < 8; i++)
		if (b >> i & 1)
			r |= (uint8_t)(1u << (7 - i));
	return r;
}

static void eattr(struct em *e, const struct cs_perf_attr *a)
{
	uint8_t f[8];

	e32(e, a->type);
	e32(e, a->size);
	e64(e, a->config);
	e64(e, a->sample_period);
	e64(e, a->sample_type);
	e64(e, a->read_format);
	memcpy(f, &a->flags, 8);
	if (e->be)
		for (int i = 0; i < 8; i++)
			f[i] = rev(f[i]);
	eb(e, f, 8);
	e32(e, a->wakeup_events);
	e32(e, a->bp_type);
	e64(e, a->config1);
	e64(e, a->config2);
	e64(e, a->branch_sample_type);
	e64(e, a->sample_regs_user);
	e32(e, a->sample_stack_user);
	e32(e, (uint32_t)a->clockid);
	e64(e, a->sample_regs_intr);
	e32(e, a->aux_watermark);
	e16(e, a->sample_max_stack);
	e16(e, a->reserved_2);
	e32(e, a->aux_sample_size);
	e32(e, a->aux_action);
	e64(e, a->sig_data);
	/* 128 bytes: what perf 6.1 writes */
}

static void estr(struct em *e, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + 7) / 8 * 8;

	e32(e, (uint32_t)padded);
	eb(e, s, n);
	ezero(e, padded - n);
}

/* ---- the profile ---- */

#define ST (CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID | \
	    CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD | \
	    CS_SAMPLE_CALLCHAIN | CS_SAMPLE_RAW)

static const uint64_t ids0[] = { 6, 7 }, ids1[] = { 8, 9 };
static const uint8_t bid[20] = { 0x28, 0xc0, 0x9c, 0x46, 0xa2, 0xe0, 0x8a, 0x1a,
				 0x41, 0x95, 0xa5, 0x7a, 0x1d, 0xef, 0xbe, 0x8d,
				 0x37, 0x7f, 0xa1, 0x56 };

static struct cs_perf_attr mkattr(uint64_t config, uint64_t flags)
{
	struct cs_perf_attr a;

	memset(&a, 0, sizeof(a));
	a.type = CS_PERF_TYPE_SOFTWARE;
	a.size = CS_PERF_ATTR_SIZE_VER7;
	a.config = config;
	a.sample_period = 4000;
	a.sample_type = ST;
	a.flags = CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_FREQ | CS_ATTR_DISABLED | flags;
	a.sample_max_stack = 127;
	return a;
}

static void trailer(struct em *e, uint32_t tid, uint64_t time, uint32_t cpu,
		    uint64_t id)
{
	e32(e, tid); e32(e, tid);	/* TID */
	e64(e, time);			/* TIME */
	e32(e, cpu); e32(e, 0);		/* CPU */
	e64(e, id);			/* IDENTIFIER */
}

static void esample(struct em *e, uint64_t id, uint32_t tid, uint64_t time,
		    const uint64_t *chain, uint64_t nr, const char *raw)
{
	size_t at = rbegin(e, CS_RECORD_SAMPLE, CS_MISC_KERNEL);
	size_t rl = strlen(raw), rpad = (rl + 4 + 7) / 8 * 8 - 4;

	e64(e, id);
	e64(e, chain[1]);		/* IP */
	e32(e, tid); e32(e, tid);
	e64(e, time);
	e32(e, (uint32_t)(tid & 1)); e32(e, 0);
	e64(e, 250000);
	e64(e, nr);
	for (uint64_t i = 0; i < nr; i++)
		e64(e, chain[i]);
	e32(e, (uint32_t)rpad);		/* RAW: bytes stay as they are */
	eb(e, raw, rl);
	ezero(e, rpad - rl);
	rend(e, at);
}

/* The records every variant shares. */
static void records(struct em *e)
{
	static const uint64_t k1[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010ULL,
		0xffffffff81000020ULL, CS_CONTEXT_USER_DEFERRED, 0xb00000006ULL };
	static const uint64_t k2[] = { CS_CONTEXT_KERNEL, 0xffffffff81000030ULL,
		CS_CONTEXT_USER, 0x401234, 0x401000 };
	size_t at;

	at = rbegin(e, CS_RECORD_COMM, CS_MISC_COMM_EXEC);
	e32(e, 100); e32(e, 100);
	eb(e, "workload\0\0\0\0\0\0\0", 16);
	trailer(e, 100, 1000, 0, 6);
	rend(e, at);

	at = rbegin(e, CS_RECORD_MMAP2, CS_MISC_USER);
	e32(e, 100); e32(e, 100);
	e64(e, 0x400000); e64(e, 0x2000); e64(e, 0);
	e32(e, 8); e32(e, 1); e64(e, 12345); e64(e, 0);	/* maj min ino gen */
	e32(e, 5); e32(e, 2);				/* prot, flags */
	eb(e, "/opt/fixt/workload\0\0\0\0\0\0", 24);
	trailer(e, 100, 1001, 0, 6);
	rend(e, at);

	esample(e, 6, 100, 2000, k1, 5, "tracepoint bytes");
	esample(e, 7, 101, 2001, k2, 5, "xyz");

	at = rbegin(e, CS_RECORD_FINISHED_ROUND, 0);
	rend(e, at);

	at = rbegin(e, CS_RECORD_CALLCHAIN_DEFERRED, CS_MISC_USER);
	e64(e, 0xb00000006ULL);
	e64(e, 3);
	e64(e, 0x7f18fe337fa7ULL); e64(e, 0x7f18fe330e0fULL); e64(e, 0x401111);
	trailer(e, 100, 2500, 1, 8);
	rend(e, at);

	at = rbegin(e, CS_RECORD_LOST, 0);
	e64(e, 7); e64(e, 3);
	trailer(e, 0, 2600, 1, 7);
	rend(e, at);

	at = rbegin(e, CS_RECORD_FORK, 0);
	e32(e, 100); e32(e, 100); e32(e, 102); e32(e, 100); e64(e, 2700);
	trailer(e, 102, 2700, 0, 6);
	rend(e, at);

	at = rbegin(e, CS_RECORD_EXIT, 0);
	e32(e, 100); e32(e, 1); e32(e, 100); e32(e, 1); e64(e, 3000);
	trailer(e, 100, 3000, 0, 9);
	rend(e, at);
}

static void ebuild_id(struct em *e, uint32_t type)
{
	size_t at = rbegin(e, type, CS_MISC_USER | CS_MISC_BUILD_ID_SIZE);

	e32(e, (uint32_t)-1);
	eb(e, bid, 20);
	eb(e, "\x14\0\0\0", 4);
	eb(e, "/opt/fixt/workload\0\0\0\0", 20);
	epad8(e);
	rend(e, at);
}

/* Feature bodies, in the order of their bits. */
static void feature(struct em *e, int feat)
{
	struct cs_perf_attr a0 = mkattr(0, CS_ATTR_DEFER_CALLCHAIN |
					CS_ATTR_DEFER_OUTPUT);
	struct cs_perf_attr a1 = mkattr(CS_PERF_COUNT_SW_DUMMY, CS_ATTR_MMAP);

	switch (feat) {
	case CS_FEAT_BUILD_ID:
		ebuild_id(e, CS_RECORD_HEADER_BUILD_ID);
		break;
	case CS_FEAT_HOSTNAME:	estr(e, "testhost"); break;
	case CS_FEAT_OSRELEASE:	estr(e, "7.3.4"); break;
	case CS_FEAT_NRCPUS:	e32(e, 4); e32(e, 2); break;
	case CS_FEAT_TOTAL_MEM:	e64(e, 2038036); break;
	case CS_FEAT_CMDLINE:
		e32(e, 3);
		estr(e, "perf"); estr(e, "record"); estr(e, "-g");
		break;
	case CS_FEAT_EVENT_DESC:
		e32(e, 2);
		e32(e, CS_PERF_ATTR_SIZE_VER7);
		eattr(e, &a0); e32(e, 2); estr(e, "cpu-clock:ppp");
		e64(e, ids0[0]); e64(e, ids0[1]);
		eattr(e, &a1); e32(e, 2); estr(e, "dummy:u");
		e64(e, ids1[0]); e64(e, ids1[1]);
		break;
	}
}

static const int feats[] = {
	CS_FEAT_BUILD_ID, CS_FEAT_HOSTNAME, CS_FEAT_OSRELEASE, CS_FEAT_NRCPUS,
	CS_FEAT_TOTAL_MEM, CS_FEAT_CMDLINE, CS_FEAT_EVENT_DESC,
};
#define NR_FEATS (sizeof(feats) / sizeof(feats[0]))

/* a feature bit (under 64) newer than the reader, with a section of its
 * own, that file_profile() adds when set (0: none) */
static int newer_feature;

/* data: emits the data section (records, or compressed records) */
typedef void (*data_fn)(struct em *e, void *ctx);

static void plain_data(struct em *e, void *ctx)
{
	(void)ctx;
	records(e);
}

static void file_profile(struct em *e, data_fn data, void *ctx)
{
	struct cs_perf_attr a0 = mkattr(0, CS_ATTR_DEFER_CALLCHAIN |
					CS_ATTR_DEFER_OUTPUT);
	struct cs_perf_attr a1 = mkattr(CS_PERF_COUNT_SW_DUMMY, CS_ATTR_MMAP);
	size_t ids_at, attrs_at, data_at, data_end, ftab;
	uint64_t feat_bits = 0;

	e64(e, CS_PERF_MAGIC2);		/* in the chosen order */
	e64(e, 104);
	e64(e, CS_PERF_ATTR_SIZE_VER7 + 16);
	ezero(e, 104 - 24);
	ids_at = e->len;
	e64(e, ids0[0]); e64(e, ids0[1]); e64(e, ids1[0]); e64(e, ids1[1]);
	attrs_at = e->len;
	eattr(e, &a0); e64(e, ids_at); e64(e, 16);
	eattr(e, &a1); e64(e, ids_at + 16); e64(e, 16);
	data_at = e->len;
	data(e, ctx);
	data_end = e->len;
	ftab = e->len;
	ezero(e, (NR_FEATS + !!newer_feature) * 16);
	for (size_t i = 0; i < NR_FEATS; i++) {
		size_t at = e->len;

		feature(e, feats[i]);
		e64_at(e, ftab + i * 16, at);
		e64_at(e, ftab + i * 16 + 8, e->len - at);
		feat_bits |= 1ULL << feats[i];
	}
	if (newer_feature) {
		e64_at(e, ftab + NR_FEATS * 16, e->len);
		e64_at(e, ftab + NR_FEATS * 16 + 8, 24);
		e64(e, 0xabababababababab); e64(e, 1); e64(e, 2);
	}
	e64_at(e, 24, attrs_at);
	e64_at(e, 32, data_at - attrs_at);
	e64_at(e, 40, data_at);
	e64_at(e, 48, data_end - data_at);
	if (newer_feature)		/* one of the first 64 */
		feat_bits |= 1ULL << newer_feature;
	e64_at(e, 72, feat_bits);
}

static void pipe_profile(struct em *e, data_fn data, void *ctx)
{
	struct cs_perf_attr a0 = mkattr(0, CS_ATTR_DEFER_CALLCHAIN |
					CS_ATTR_DEFER_OUTPUT);
	struct cs_perf_attr a1 = mkattr(CS_PERF_COUNT_SW_DUMMY, CS_ATTR_MMAP);
	size_t at;

	e64(e, CS_PERF_MAGIC2);
	e64(e, 16);
	at = rbegin(e, CS_RECORD_HEADER_ATTR, 0);
	eattr(e, &a0); e64(e, ids0[0]); e64(e, ids0[1]);
	rend(e, at);
	at = rbegin(e, CS_RECORD_HEADER_ATTR, 0);
	eattr(e, &a1); e64(e, ids1[0]); e64(e, ids1[1]);
	rend(e, at);
	for (size_t i = 0; i < NR_FEATS; i++) {
		if (feats[i] == CS_FEAT_BUILD_ID || feats[i] == CS_FEAT_EVENT_DESC)
			continue;
		at = rbegin(e, CS_RECORD_HEADER_FEATURE, 0);
		e64(e, (uint64_t)feats[i]);
		feature(e, feats[i]);
		epad8(e);
		rend(e, at);
	}
	/* names arrive as EVENT_UPDATE (NAME = 2) in a stream */
	at = rbegin(e, CS_RECORD_EVENT_UPDATE, 0);
	e64(e, 2); e64(e, ids1[0]);
	eb(e, "dummy:u\0", 8);
	rend(e, at);
	at = rbegin(e, CS_RECORD_EVENT_UPDATE, 0);
	e64(e, 2); e64(e, ids0[1]);
	eb(e, "cpu-clock:ppp\0\0\0", 16);
	rend(e, at);
	ebuild_id(e, CS_RECORD_HEADER_BUILD_ID);
	data(e, ctx);
}

/* ---- reading back ---- */

static char *write_tmp(const struct em *e)
{
	char *path = strdup("/tmp/cs-test-read.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, e->b, e->len), (ssize_t)e->len);
	close(fd);
	return path;
}

struct feeder {
	const uint8_t *b;
	size_t len, chunk;
	int fd;
};

/* Writes the stream in small pieces so that records straddle reads. */
static void *feed(void *arg)
{
	struct feeder *f = arg;

	for (size_t off = 0; off < f->len; off += f->chunk) {
		size_t n = f->len - off < f->chunk ? f->len - off : f->chunk;

		if (write(f->fd, f->b + off, n) != (ssize_t)n)
			break;
		sched_yield();
	}
	close(f->fd);
	return NULL;
}

/* One line per record: everything a consumer would look at. */
static void describe(FILE *out, const struct cs_event *ev)
{
	fprintf(out, "%s misc %#x", cs_record_type_name(ev->type), ev->misc);
	if (ev->evsel)
		fprintf(out, " [%s]", ev->evsel->name);
	if (ev->has_id)
		fprintf(out, " id %u/%u t%" PRIu64 " i%" PRIu64 " c%u",
			ev->id.pid, ev->id.tid, ev->id.time, ev->id.id, ev->id.cpu);
	switch (ev->type) {
	case CS_RECORD_SAMPLE:
		fprintf(out, " ip %#" PRIx64 " period %" PRIu64 " raw %.*s chain",
			ev->sample.ip, ev->sample.period, (int)ev->sample.raw_size,
			(const char *)ev->sample.raw);
		for (uint64_t i = 0; i < ev->sample.callchain_nr; i++)
			fprintf(out, " %" PRIx64, ev->sample.callchain[i]);
		break;
	case CS_RECORD_CALLCHAIN_DEFERRED:
		fprintf(out, " cookie %" PRIx64 " ips", ev->deferred.cookie);
		for (uint64_t i = 0; i < ev->deferred.nr; i++)
			fprintf(out, " %" PRIx64, ev->deferred.ips[i]);
		break;
	case CS_RECORD_COMM:
		fprintf(out, " %u/%u %s", ev->comm.pid, ev->comm.tid, ev->comm.comm);
		break;
	case CS_RECORD_MMAP2:
		fprintf(out, " %#" PRIx64 "+%#" PRIx64 " %u:%u %" PRIu64
			" prot %u %s", ev->mmap.start, ev->mmap.len, ev->mmap.maj,
			ev->mmap.min, ev->mmap.ino, ev->mmap.prot, ev->mmap.filename);
		break;
	case CS_RECORD_FORK:
	case CS_RECORD_EXIT:
		fprintf(out, " %u/%u<-%u/%u t%" PRIu64, ev->fork.pid, ev->fork.tid,
			ev->fork.ppid, ev->fork.ptid, ev->fork.time);
		break;
	case CS_RECORD_LOST:
		fprintf(out, " %" PRIu64 " lost %" PRIu64, ev->lost.id, ev->lost.lost);
		break;
	}
	fputc('\n', out);
}

/* Read with cs_reader_inflate_ahead() on, and with cs_reader_peek_type()
 * asked before every record, as reading ahead asks: main() runs every
 * test in each way, so every record, offset and error must come out the
 * same whether or not the reader was asked what comes next. */
static bool inflate_ahead, peek_first;

struct readout {
	char *text;		/* kernel records and rounds, described */
	size_t text_len;
	int err;
	char msg[512];
	uint64_t nr_user;	/* records >= 64 other than FINISHED_ROUND */
	uint64_t offsets;	/* a hash of every record's offset, in order */
	uint64_t records;
	uint64_t told;		/* records whose type a peek told before */
	bool truncated;
	char warning[512];	/* cs_reader_warning(), "" if none */
	struct cs_file_info info;
	char host[64], cmdline[64], names[64], bid[128];
};

static int bid_cb(void *ctx, int32_t pid, uint16_t misc, const uint8_t *b,
		  size_t size, const char *path)
{
	struct readout *o = ctx;
	size_t n = 0;

	(void)misc;
	for (size_t i = 0; i < size; i++)
		n += (size_t)snprintf(o->bid + n, sizeof(o->bid) - n, "%02x", b[i]);
	snprintf(o->bid + n, sizeof(o->bid) - n, " %d %s", pid, path);
	return 0;
}

static void read_all(const char *path, int fd, struct readout *o)
{
	struct cs_errbuf err = { { 0 } };
	struct cs_reader *r;
	struct cs_record rec;
	struct cs_event ev;
	FILE *out;
	int ret;

	memset(o, 0, sizeof(*o));
	out = open_memstream(&o->text, &o->text_len);
	ret = cs_reader_open(path, fd, &err, &r);
	if (ret == 0) {
		int peeked;

		cs_reader_inflate_ahead(r, inflate_ahead);
		peeked = peek_first ? cs_reader_peek_type(r) : -1;
		while ((ret = cs_reader_next(r, &rec)) > 0) {
			if (peeked >= 0) {
				assert_int_equal(peeked, rec.type > 0xffff ?
						 0xffff : rec.type);
				o->told++;
			}
			o->records++;
			o->offsets = o->offsets * 1000003 + rec.offset;
			ret = cs_decode(cs_reader_evlist(r), rec.bytes, rec.size,
					rec.offset, cs_reader_path(r), &ev, &err);
			if (ret)
				break;
			assert_int_equal(rec.type, ev.type);
			if (rec.type < CS_RECORD_HEADER_ATTR ||
			    rec.type == CS_RECORD_FINISHED_ROUND)
				describe(out, &ev);
			else
				o->nr_user++;
			/* after the record is used: a stream's peek may move
			 * the buffer it lies in */
			peeked = peek_first ? cs_reader_peek_type(r) : -1;
		}
		if (!ret) {
			const struct cs_evlist *l = cs_reader_evlist(r);

			o->truncated = cs_reader_truncated(r);
			snprintf(o->warning, sizeof(o->warning), "%s",
				 cs_reader_warning(r) ? cs_reader_warning(r) : "");
			o->info = *cs_reader_info(r);
			snprintf(o->host, sizeof(o->host), "%s %s",
				 o->info.hostname ? o->info.hostname : "-",
				 o->info.os_release ? o->info.os_release : "-");
			snprintf(o->cmdline, sizeof(o->cmdline), "%s",
				 o->info.cmdline ? o->info.cmdline : "-");
			snprintf(o->names, sizeof(o->names), "%s,%s",
				 cs_evlist_get(l, 0)->name, cs_evlist_get(l, 1)->name);
			cs_reader_for_each_build_id(r, bid_cb, o);
			/* the strings die with the reader: keep the numbers */
			o->info.hostname = o->info.os_release = NULL;
			o->info.perf_version = o->info.arch = NULL;
			o->info.cpudesc = o->info.cmdline = NULL;
		}
		cs_reader_free(r);
	}
	fclose(out);
	o->err = ret;
	snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
}

static void read_em_file(const struct em *e, struct readout *o)
{
	char *path = write_tmp(e);

	read_all(path, -1, o);
	unlink(path);
	free(path);
}

static void read_em_pipe(const struct em *e, size_t chunk, struct readout *o)
{
	struct feeder f = { e->b, e->len, chunk, -1 };
	pthread_t t;
	int p[2];

	assert_int_equal(pipe(p), 0);
	f.fd = p[1];
	assert_int_equal(pthread_create(&t, NULL, feed, &f), 0);
	read_all("test-pipe", p[0], o);
	pthread_join(t, NULL);
	close(p[0]);
}

static void free_readout(struct readout *o)
{
	free(o->text);
}

static void le_file(struct em *e)
{
	memset(e, 0, sizeof(*e));
	file_profile(e, plain_data, NULL);
}

/* ---- tests ---- */

static void file_gives_every_record_decoded(void **state)
{
	struct em e;
	struct readout o;

	(void)state;
	le_file(&e);
	read_em_file(&e, &o);
	assert_int_equal(o.err, 0);
	assert_non_null(strstr(o.text, "SAMPLE misc 0x1 [cpu-clock:ppp] id 100/100 "
			       "t2000 i6 c0 ip 0xffffffff81000010 period 250000 "
			       "raw tracepoint bytes chain ffffffffffffff80 "
			       "ffffffff81000010 ffffffff81000020 fffffffffffffd80 "
			       "b00000006\n"));
	assert_non_null(strstr(o.text, "CALLCHAIN_DEFERRED misc 0x2 [dummy:u] id "
			       "100/100 t2500 i8 c1 cookie b00000006 ips "
			       "7f18fe337fa7 7f18fe330e0f 401111\n"));
	assert_non_null(strstr(o.text, "COMM misc 0x2000 [cpu-clock:ppp] id "
			       "100/100 t1000 i6 c0 100/100 workload\n"));
	assert_non_null(strstr(o.text, "MMAP2 misc 0x2 [cpu-clock:ppp] id 100/100 "
			       "t1001 i6 c0 0x400000+0x2000 8:1 12345 prot 5 "
			       "/opt/fixt/workload\n"));
	assert_non_null(strstr(o.text, "EXIT misc 0 [dummy:u] id 100/100 t3000 "
			       "i9 c0 100/100<-1/1 t3000\n"));
	assert_string_equal(o.host, "testhost 7.3.4");
	assert_string_equal(o.cmdline, "perf record -g");
	assert_string_equal(o.names, "cpu-clock:ppp,dummy:u");
	assert_string_equal(o.bid, "28c09c46a2e08a1a4195a57a1defbe8d377fa156 -1 "
			    "/opt/fixt/workload");
	assert_int_equal(o.info.nr_cpus_avail, 4);
	assert_int_equal(o.info.nr_cpus_online, 2);
	assert_int_equal(o.info.total_mem_kb, 2038036);
	assert_false(o.info.pipe_mode);
	assert_false(o.info.big_endian);
	assert_false(o.truncated);
	free_readout(&o);
	free(e.b);
}

static void pipe_gives_the_same_records_as_the_file(void **state)
{
	static const size_t chunks[] = { 1, 7, 13, 4096, 1 << 20 };
	struct em f, p;
	struct readout of, op;

	(void)state;
	le_file(&f);
	memset(&p, 0, sizeof(p));
	pipe_profile(&p, plain_data, NULL);
	read_em_file(&f, &of);
	assert_int_equal(of.err, 0);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		read_em_pipe(&p, chunks[i], &op);
		assert_int_equal(op.err, 0);
		assert_string_equal(op.text, of.text);
		assert_string_equal(op.host, of.host);
		assert_string_equal(op.cmdline, of.cmdline);
		assert_string_equal(op.names, of.names);
		assert_string_equal(op.bid, of.bid);
		assert_true(op.info.pipe_mode);
		assert_int_equal(op.info.nr_cpus_online, 2);
		free_readout(&op);
	}
	/* a stream saved to a regular file reads the same */
	read_em_file(&p, &op);
	assert_int_equal(op.err, 0);
	assert_string_equal(op.text, of.text);
	free_readout(&op);
	free_readout(&of);
	free(f.b);
	free(p.b);
}

static void big_endian_gives_the_same_records(void **state)
{
	struct em le, be;
	struct readout ol, ob;

	(void)state;
	le_file(&le);
	memset(&be, 0, sizeof(be));
	be.be = true;
	file_profile(&be, plain_data, NULL);
	assert_memory_not_equal(le.b + 8, be.b + 8, 8);
	read_em_file(&le, &ol);
	read_em_file(&be, &ob);
	assert_int_equal(ob.err, 0);
	assert_true(ob.info.big_endian);
	assert_string_equal(ob.text, ol.text);
	assert_string_equal(ob.host, ol.host);
	assert_string_equal(ob.cmdline, ol.cmdline);
	assert_string_equal(ob.names, ol.names);
	assert_string_equal(ob.bid, ol.bid);
	assert_int_equal(ob.info.nr_cpus_avail, 4);
	assert_int_equal(ob.info.total_mem_kb, 2038036);
	free_readout(&ob);

	/* and as a stream */
	free(be.b);
	memset(&be, 0, sizeof(be));
	be.be = true;
	pipe_profile(&be, plain_data, NULL);
	read_em_pipe(&be, 5, &ob);
	assert_int_equal(ob.err, 0);
	assert_string_equal(ob.text, ol.text);
	assert_string_equal(ob.names, ol.names);
	free_readout(&ob);
	free_readout(&ol);
	free(le.b);
	free(be.b);
}

static void big_endian_attr_flags_keep_their_meaning(void **state)
{
	struct em be;
	char *path;
	struct cs_errbuf err = { { 0 } };
	struct cs_reader *r;
	const struct cs_perf_attr *a;

	(void)state;
	memset(&be, 0, sizeof(be));
	be.be = true;
	file_profile(&be, plain_data, NULL);
	path = write_tmp(&be);
	assert_int_equal(cs_reader_open(path, -1, &err, &r), 0);
	a = cs_evsel_attr(cs_evlist_get(cs_reader_evlist(r), 0));
	assert_int_equal(a->flags, CS_ATTR_SAMPLE_ID_ALL | CS_ATTR_FREQ |
			 CS_ATTR_DISABLED | CS_ATTR_DEFER_CALLCHAIN |
			 CS_ATTR_DEFER_OUTPUT);
	assert_int_equal(a->sample_type, ST);
	assert_int_equal(a->sample_max_stack, 127);
	assert_int_equal(a->size, CS_PERF_ATTR_SIZE_VER7);
	cs_reader_free(r);
	unlink(path);
	free(path);
	free(be.b);
}

/* Compressed data: the records' stream as one zstd stream, cut into
 * payloads of `cut` bytes so that records straddle payloads. */
struct zctx {
	size_t cut;
	uint32_t type;		/* COMPRESSED or COMPRESSED2 */
	bool be;
	size_t repeat;		/* the records this many times (0: once) */
};

static void compressed_data(struct em *e, void *ctx)
{
	struct zctx *z = ctx;
	struct em inner = { .be = e->be };
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t cap, n;
	uint8_t *out;

	for (size_t k = 0; k < (z->repeat ? z->repeat : 1); k++)
		records(&inner);
	cap = ZSTD_compressBound(inner.len);
	out = malloc(cap);
	n = ZSTD_compress2(cc, out, cap, inner.b, inner.len);
	assert_false(ZSTD_isError(n));
	for (size_t off = 0; off < n; off += z->cut) {
		size_t len = n - off < z->cut ? n - off : z->cut;
		size_t at = rbegin(e, z->type, 0);

		if (z->type == CS_RECORD_COMPRESSED2)
			e64(e, len);
		eb(e, out + off, len);
		if (z->type == CS_RECORD_COMPRESSED2)
			epad8(e);	/* COMPRESSED2 keeps the next aligned */
		rend(e, at);
	}
	ZSTD_freeCCtx(cc);
	free(out);
	free(inner.b);
}

static void compressed_records_straddle_payloads(void **state)
{
	static const size_t cuts[] = { 1, 3, 16, 61, 100000 };
	static const uint32_t types[] = { CS_RECORD_COMPRESSED, CS_RECORD_COMPRESSED2 };
	struct em plain;
	struct readout op;

	(void)state;
	le_file(&plain);
	read_em_file(&plain, &op);
	for (size_t t = 0; t < 2; t++) {
		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			for (int be = 0; be < 2; be++) {
				struct zctx z = { cuts[i], types[t], be, 0 };
				struct em e = { .be = be };
				struct readout oz;

				file_profile(&e, compressed_data, &z);
				read_em_file(&e, &oz);
				assert_string_equal(oz.msg, "");
				assert_int_equal(oz.err, 0);
				assert_string_equal(oz.text, op.text);
				assert_true(oz.nr_user > 0);
				free_readout(&oz);
				free(e.b);
			}
		}
	}
	free_readout(&op);
	free(plain.b);
}

/* The error names the record type it was in, COMPRESSED or COMPRESSED2. */
static void corrupt_compressed_data_is_an_error(void **state)
{
	static const uint32_t types[] = { CS_RECORD_COMPRESSED, CS_RECORD_COMPRESSED2 };
	static const char *const names[] = { "COMPRESSED", "COMPRESSED2" };

	(void)state;
	for (size_t t = 0; t < 2; t++) {
		struct zctx z = { 40, types[t], false, 0 };
		struct em e = { 0 };
		struct readout o;
		uint64_t data_at, second;
		uint16_t first_size;
		char want[64];

		file_profile(&e, compressed_data, &z);
		memcpy(&data_at, e.b + 40, 8);
		memcpy(&first_size, e.b + data_at + 6, 2);
		second = data_at + first_size;
		/* the second payload's bytes past its header, scrambled */
		for (size_t i = second + 16; i < second + 48; i++)
			e.b[i] ^= 0x5a;
		read_em_file(&e, &o);
		assert_int_equal(o.err, -EBADMSG);
		snprintf(want, sizeof(want), ": %s record at offset 0x", names[t]);
		assert_non_null(strstr(o.msg, want));
		free_readout(&o);
		free(e.b);
	}
}

/* Reading ahead asks cs_reader_peek_type() before every record and hands
 * the record back to the caller's thread when it cannot be told: the type
 * is told for every record of a mapped file, of a stream fed a byte at a
 * time or in big reads, and of compressed payloads cut anywhere (read_all()
 * checks each answer against the record that comes). */
static void peek_tells_the_next_type(void **state)
{
	static const size_t chunks[] = { 1, 7, 4096, 1 << 20 };
	static const size_t cuts[] = { 1, 3, 61, 100000 };
	bool was = peek_first;
	struct em f, p;
	struct readout o;

	(void)state;
	peek_first = true;
	le_file(&f);
	read_em_file(&f, &o);
	assert_int_equal(o.err, 0);
	/* every one, the first too: the file is mapped when it opens */
	assert_int_equal(o.told, o.records);
	free_readout(&o);

	memset(&p, 0, sizeof(p));
	pipe_profile(&p, plain_data, NULL);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		read_em_pipe(&p, chunks[i], &o);
		assert_int_equal(o.err, 0);
		assert_true(o.records > 8);
		assert_int_equal(o.told, o.records);
		free_readout(&o);
	}
	for (size_t t = 0; t < 2; t++) {
		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			struct zctx z = { cuts[i], t ? CS_RECORD_COMPRESSED2 :
					  CS_RECORD_COMPRESSED, false, 0 };
			struct em e = { 0 };

			file_profile(&e, compressed_data, &z);
			read_em_file(&e, &o);
			assert_int_equal(o.err, 0);
			/* a payload of one byte too: a record it leaves
			 * half-done is told as the outer record that follows */
			assert_true(o.records > 8);
			assert_int_equal(o.told, o.records);
			free_readout(&o);
			free(e.b);
		}
	}
	/* one payload that inflates to more than a chunk (1 MiB): records
	 * run from one chunk into the next, and are told all the same */
	for (size_t t = 0; t < 2; t++) {
		struct zctx z = { 60000, t ? CS_RECORD_COMPRESSED2 :
				  CS_RECORD_COMPRESSED, false, 20000 };
		struct em e = { 0 };

		file_profile(&e, compressed_data, &z);
		read_em_file(&e, &o);
		assert_int_equal(o.err, 0);
		assert_true(o.records > 20000 * 8);
		assert_int_equal(o.told, o.records);
		free_readout(&o);
		free(e.b);
	}
	free(f.b);
	free(p.b);
	peek_first = was;
}

/* The same records, offsets and errors with the payloads inflated on a
 * second thread as without; a reader freed half-way ends that thread. */
static void inflating_ahead_changes_nothing(void **state)
{
	static const size_t cuts[] = { 24, 61, 100000 };
	bool was = inflate_ahead;

	(void)state;
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		for (int corrupt = 0; corrupt < 2; corrupt++) {
			struct zctx z = { cuts[i], CS_RECORD_COMPRESSED2, i == 1, 0 };
			struct em e = { .be = z.be };
			struct readout o1, o2;
			uint64_t data_at;
			char *path;

			file_profile(&e, compressed_data, &z);
			memcpy(&data_at, e.b + 40, 8);
			if (z.be)
				data_at = __builtin_bswap64(data_at);
			/* zstd bytes of the third payload (of the one, uncut) */
			for (int k = 0; k < (z.cut < 1000 ? 2 : 0); k++)
				data_at += z.be ? (e.b[data_at + 6] << 8 |
						   e.b[data_at + 7]) :
					  (e.b[data_at + 7] << 8 | e.b[data_at + 6]);
			for (size_t b = data_at + 20; corrupt && b < data_at + 40 &&
			     b < e.len; b++)
				e.b[b] ^= 0x5a;
			path = write_tmp(&e);	/* one name, in both messages */
			inflate_ahead = false;
			read_all(path, -1, &o1);
			inflate_ahead = true;
			read_all(path, -1, &o2);
			unlink(path);
			free(path);
			assert_int_equal(o1.err, corrupt ? -EBADMSG : 0);
			assert_int_equal(o2.err, o1.err);
			assert_string_equal(o2.msg, o1.msg);
			assert_string_equal(o2.text, o1.text);
			assert_true(o2.offsets == o1.offsets);
			assert_true(o2.nr_user == o1.nr_user);
			free_readout(&o1);
			free_readout(&o2);
			free(e.b);
		}
	}
	inflate_ahead = was;
}

static void reader_freed_while_inflating_ahead(void **state)
{
	struct zctx z = { 7, CS_RECORD_COMPRESSED, false, 0 };
	struct cs_errbuf err = { { 0 } };
	struct cs_reader *r;
	struct cs_record rec;
	struct em e = { 0 };
	char *path;

	(void)state;
	file_profile(&e, compressed_data, &z);
	path = write_tmp(&e);
	for (int n = 0; n < 40; n += 3) {
		assert_int_equal(cs_reader_open(path, -1, &err, &r), 0);
		cs_reader_inflate_ahead(r, true);
		for (int i = 0; i < n; i++)
			assert_int_equal(cs_reader_next(r, &rec), 1);
		cs_reader_free(r);
	}
	unlink(path);
	free(path);
	free(e.b);
}

static void truncated_file_names_the_offset(void **state)
{
	struct em e;
	struct readout o;
	size_t data_at;

	(void)state;
	le_file(&e);
	memcpy(&data_at, e.b + 40, 8);
	/* cut inside the data: the feature table is gone, the header says so */
	e.len = data_at + 100;
	read_em_file(&e, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "runs past the end of the file"));
	assert_non_null(strstr(o.msg, "offset 0x"));
	free_readout(&o);

	/* a record claiming 0 bytes */
	free(e.b);
	le_file(&e);
	e.b[data_at + 6] = 0;
	e.b[data_at + 7] = 0;
	read_em_file(&e, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "COMM record at offset 0x"));
	assert_non_null(strstr(o.msg, "claims 0 bytes"));
	free_readout(&o);

	/* a record claiming more than the data section holds */
	free(e.b);
	le_file(&e);
	e.b[data_at + 7] = 0x40;
	read_em_file(&e, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "COMM record at offset 0x"));
	assert_non_null(strstr(o.msg, "claims 16448 bytes, 704 remain"));
	free_readout(&o);
	free(e.b);
}

static void truncated_stream_names_the_offset(void **state)
{
	struct em p = { 0 };
	struct readout o;

	(void)state;
	pipe_profile(&p, plain_data, NULL);
	p.len -= 20;		/* inside the last record (EXIT, 64 bytes) */
	read_em_pipe(&p, 100, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "test-pipe: EXIT record at offset 0x"));
	assert_non_null(strstr(o.msg, "stream ends inside it (44 of 64 bytes)"));
	free_readout(&o);
	p.len -= 40;		/* inside its header */
	read_em_pipe(&p, 100, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "inside a record header at offset 0x"));
	free_readout(&o);
	free(p.b);
}

static void dead_recorder_file_reads_to_the_last_whole_record(void **state)
{
	struct em e, full;
	struct readout o, of;
	uint64_t data_at;

	(void)state;
	le_file(&full);
	read_em_file(&full, &of);
	le_file(&e);
	memcpy(&data_at, e.b + 40, 8);
	memset(e.b + 48, 0, 8);		/* data size 0 */
	memset(e.b + 72, 0, 32);	/* no features written yet */
	/* end inside the EXIT record (the last one, 64 bytes) */
	{
		const char *last = strstr(of.text, "EXIT");
		size_t data_len;

		assert_non_null(last);
		memcpy(&data_len, full.b + 48, 8);
		e.len = data_at + data_len - 30;
	}
	read_em_file(&e, &o);
	assert_string_equal(o.msg, "");
	assert_int_equal(o.err, 0);
	assert_true(o.truncated);
	/* everything but the EXIT; names derived (no features were written) */
	assert_non_null(strstr(o.text, "CALLCHAIN_DEFERRED misc 0x2 [dummy] id "
			       "100/100 t2500 i8 c1 cookie b00000006"));
	assert_non_null(strstr(o.text, "\nFORK misc 0 [cpu-clock] id 102/102 "
			       "t2700 i6 c0 100/102<-100/100 t2700\n"));
	assert_null(strstr(o.text, "EXIT"));
	free_readout(&o);

	/* the same file ending on a record boundary: still cut short (the
	 * header never got its size), every record there */
	e.len = data_at + (of.text ? 0 : 0);
	{
		uint64_t data_len;

		memcpy(&data_len, full.b + 48, 8);
		e.len = data_at + data_len;
	}
	read_em_file(&e, &o);
	assert_int_equal(o.err, 0);
	assert_true(o.truncated);
	assert_non_null(strstr(o.text, "\nEXIT misc 0 [dummy] id 100/100"));
	free_readout(&o);
	free_readout(&of);
	free(e.b);
	free(full.b);
}

/* AUXTRACE: its payload follows the record, not counted in its size. */
static void aux_data(struct em *e, void *ctx)
{
	size_t at = rbegin(e, CS_RECORD_AUXTRACE, 0);
	uint64_t payload = *(uint64_t *)ctx;

	e64(e, payload); e64(e, 0); e64(e, 1);
	e32(e, 0); e32(e, 100); e32(e, 0); e32(e, 0);
	rend(e, at);
	for (uint64_t i = 0; i < payload; i++)
		eb(e, "\x09", 1);	/* looks like SAMPLE headers if misread */
	records(e);
}

static void auxtrace_payload_is_skipped(void **state)
{
	struct em plain, e = { 0 };
	struct readout op, o;
	uint64_t payload = 48;

	(void)state;
	le_file(&plain);
	read_em_file(&plain, &op);
	file_profile(&e, aux_data, &payload);
	read_em_file(&e, &o);
	assert_int_equal(o.err, 0);
	assert_string_equal(o.text, op.text);
	assert_int_equal(o.nr_user, 1);
	free_readout(&o);
	free(e.b);

	/* a payload longer than the data section */
	memset(&e, 0, sizeof(e));
	file_profile(&e, aux_data, &payload);
	{
		uint64_t data_at, huge = 1ULL << 40;

		memcpy(&data_at, e.b + 40, 8);
		memcpy(e.b + data_at + 8, &huge, 8);
	}
	read_em_file(&e, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "AUXTRACE record at offset 0x"));
	free_readout(&o);
	free_readout(&op);
	free(e.b);
	free(plain.b);
}

/* A record whose size is not a multiple of 8 leaves the next misaligned:
 * it is still read (from an aligned copy). */
static void odd_data(struct em *e, void *ctx)
{
	/* a user record of no fixed shape: FINISHED_INIT, the one this
	 * test used, must be 8 bytes */
	size_t at = rbegin(e, CS_RECORD_AUXTRACE_INFO, 0);

	(void)ctx;
	eb(e, "abcd", 4);
	rend(e, at);
	records(e);
}

static void misaligned_records_are_read(void **state)
{
	struct em plain, e = { 0 }, p = { 0 };
	struct readout op, o;

	(void)state;
	le_file(&plain);
	read_em_file(&plain, &op);
	file_profile(&e, odd_data, NULL);
	read_em_file(&e, &o);
	assert_int_equal(o.err, 0);
	assert_string_equal(o.text, op.text);
	free_readout(&o);
	free_readout(&op);
	free(e.b);
	free(plain.b);
	(void)p;
}

/* Records that do not compress well: the shared ones, then samples whose
 * raw data is pseudo-random text. */
static void noisy_records(struct em *e)
{
	static const uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000040ULL };
	uint64_t x = 0x2545f4914f6cdd1dULL;
	char raw[241];

	records(e);
	for (int i = 0; i < 500; i++) {
		for (int k = 0; k < 240; k++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			raw[k] = (char)('!' + x % 94);
		}
		raw[240] = '\0';
		esample(e, 6, 100, 4000 + (uint64_t)i, chain, 2, raw);
	}
}

static void noisy_data(struct em *e, void *ctx)
{
	(void)ctx;
	noisy_records(e);
}

/* perf 6.16+ stores COMPRESSED2's header.size, ALIGN(16 + data_size, 8),
 * in a u16: for 16 + data_size of 65529..65535 it wraps to 0 and no
 * padding is written. The first record here is such a one. */
static void wrapped_c2_data(struct em *e, void *ctx)
{
	struct em inner = { .be = e->be };
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t cap, n, first = 65531 - 16, at;
	uint8_t *out;

	(void)ctx;
	noisy_records(&inner);
	cap = ZSTD_compressBound(inner.len);
	out = malloc(cap);
	n = ZSTD_compress2(cc, out, cap, inner.b, inner.len);
	assert_false(ZSTD_isError(n));
	assert_true(n > first + 1000);
	at = rbegin(e, CS_RECORD_COMPRESSED2, 0);	/* size stays 0 */
	e64(e, first);
	eb(e, out, first);
	(void)at;
	for (size_t off = first; off < n; off += 4000) {
		size_t len = n - off < 4000 ? n - off : 4000;

		at = rbegin(e, CS_RECORD_COMPRESSED2, 0);
		e64(e, len);
		eb(e, out + off, len);
		epad8(e);
		rend(e, at);
	}
	ZSTD_freeCCtx(cc);
	free(out);
	free(inner.b);
}

static void wrapped_compressed2_size_is_recovered(void **state)
{
	struct em plain = { 0 };
	struct readout op, o;

	(void)state;
	file_profile(&plain, noisy_data, NULL);
	read_em_file(&plain, &op);
	assert_int_equal(op.err, 0);
	for (int be = 0; be < 2; be++) {
		struct em f = { .be = be }, p = { .be = be };

		file_profile(&f, wrapped_c2_data, NULL);
		read_em_file(&f, &o);
		assert_string_equal(o.msg, "");
		assert_string_equal(o.text, op.text);
		free_readout(&o);
		pipe_profile(&p, wrapped_c2_data, NULL);
		read_em_pipe(&p, 3000, &o);
		assert_string_equal(o.msg, "");
		assert_string_equal(o.text, op.text);
		free_readout(&o);
		free(f.b);
		free(p.b);
	}
	free_readout(&op);
	free(plain.b);
}

static void not_a_perf_file_is_refused(void **state)
{
	struct em e = { 0 };
	struct readout o;

	(void)state;
	eb(&e, "PERFILE1", 8);
	ezero(&e, 200);
	read_em_file(&e, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "not a perf.data file"));
	free_readout(&o);
	e.len = 10;
	read_em_file(&e, &o);
	assert_int_equal(o.err, -EBADMSG);
	assert_non_null(strstr(o.msg, "too short"));
	free_readout(&o);
	free(e.b);
	read_all("/nonexistent/perf.data", -1, &o);
	assert_int_equal(o.err, -ENOENT);
	assert_non_null(strstr(o.msg, "/nonexistent/perf.data"));
	free_readout(&o);
}

static void flipped_bytes_never_crash(void **state)
{
	struct em e;
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	(void)state;
	le_file(&e);
	for (int it = 0; it < 300; it++) {
		struct em c = e;
		struct readout o;

		c.b = malloc(e.len);
		memcpy(c.b, e.b, e.len);
		for (int k = 0; k < 4; k++) {
			seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
			c.b[seed % e.len] = (uint8_t)(seed >> 32);
		}
		read_em_file(&c, &o);
		assert_true(o.err == 0 || o.err == -EBADMSG);
		if (o.err)
			assert_non_null(strstr(o.msg, "cs-test-read"));
		free_readout(&o);
		free(c.b);
	}
	free(e.b);
}

/* text without the "[event name]" of each record: names come from the
 * EVENT_DESC feature or, without it, from the attrs */
static char *without_names(const char *text)
{
	char *out = strdup(text), *w = out;

	assert_non_null(out);
	for (const char *p = text; *p; p++) {
		if (*p == '[') {
			p = strchr(p, ']');
			assert_non_null(p);
			continue;
		}
		*w++ = *p;
	}
	*w = '\0';
	return out;
}

/* The feature table is positional: one flipped bit of the header's bitmap
 * reads every later section as another feature's. That must show as a
 * warning with the metadata dropped, never as garbage metadata; the
 * samples are read either way. */
static void flipped_feature_bit_drops_the_metadata_with_a_warning(void **state)
{
	struct em e;
	struct readout good;

	(void)state;
	le_file(&e);
	read_em_file(&e, &good);
	assert_int_equal(good.err, 0);
	assert_string_equal(good.warning, "");
	char *good_text = without_names(good.text);

	for (int bit = 0; bit < 256; bit++) {
		struct em c = e;
		struct readout o;

		c.b = malloc(e.len);
		memcpy(c.b, e.b, e.len);
		c.b[72 + bit / 8] ^= (uint8_t)(1u << bit % 8);
		read_em_file(&c, &o);
		assert_int_equal(o.err, 0);
		char *text = without_names(o.text);
		assert_string_equal(text, good_text);
		free(text);
		if (o.warning[0]) {
			assert_non_null(strstr(o.warning, "feature table at offset 0x"));
			assert_non_null(strstr(o.warning, "metadata is dropped"));
			assert_string_equal(o.host, "- -");
			assert_string_equal(o.cmdline, "-");
			assert_string_equal(o.bid, "");
		} else {
			/* a cleared last bit loses its feature unseen: what
			 * is left is still true */
			assert_string_equal(o.host, good.host);
			assert_string_equal(o.cmdline, good.cmdline);
			if (strcmp(o.names, good.names))
				assert_string_equal(o.names, "cpu-clock,dummy");
		}
		free_readout(&o);
		free(c.b);
	}
	/* bits 0 (reserved) and 1 (TRACING_DATA) are the reported case */
	for (int bit = 0; bit < 2; bit++) {
		struct readout o;

		e.b[72] ^= (uint8_t)(1u << bit);
		read_em_file(&e, &o);
		e.b[72] ^= (uint8_t)(1u << bit);
		assert_true(o.warning[0]);
		free_readout(&o);
	}
	free(good_text);
	free_readout(&good);
	free(e.b);
}

static void newer_feature_bits_are_harmless(void **state)
{
	struct em e;
	struct readout o;

	(void)state;
	newer_feature = 40;
	memset(&e, 0, sizeof(e));
	file_profile(&e, plain_data, NULL);
	newer_feature = 0;
	read_em_file(&e, &o);
	assert_int_equal(o.err, 0);
	assert_string_equal(o.warning, "");
	assert_string_equal(o.host, "testhost 7.3.4");
	assert_string_equal(o.cmdline, "perf record -g");
	free_readout(&o);
	free(e.b);
}

/* ---- resident memory ---- */

#define BIG_DATA	(96u << 20)
#define BIG_RAW		8000		/* bytes of RAW payload a sample */

/* samples of BIG_RAW bytes of payload each up to *(size_t *)ctx bytes of
 * data, counted there */
static void big_data(struct em *e, void *ctx)
{
	static const uint64_t chain[] = { CS_CONTEXT_KERNEL, 0xffffffff81000010ULL };
	char *raw = malloc(BIG_RAW + 1);
	size_t *nr = ctx, start = e->len, want = *nr;

	assert_non_null(raw);
	memset(raw, 'r', BIG_RAW);
	raw[BIG_RAW] = '\0';
	*nr = 0;
	records(e);
	while (e->len - start < want) {
		esample(e, ids0[0], 100, 5000 + *nr, chain, 2, raw);
		++*nr;
	}
	free(raw);
}

/* kB of file-backed memory this process has resident (RssFile). */
static long rss_file_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssFile: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* A file profile of about *samples samples written to a temporary file
 * (its path, the caller's to unlink and free, in *path) and opened; the
 * RssFile before it was opened in *base. */
static struct cs_reader *open_big_profile(size_t *samples, char **path,
					  long *base)
{
	static struct cs_errbuf err;
	struct em e = { 0 };
	struct cs_reader *r;

	file_profile(&e, big_data, samples);
	*path = write_tmp(&e);
	free(e.b);
	*base = rss_file_kb();
	assert_true(*base >= 0);
	assert_int_equal(cs_reader_open(*path, -1, &err, &r), 0);
	return r;
}

/* The reader gives back the pages it has passed (and maps only a window
 * ahead), so reading a file much larger than that keeps its resident
 * share bounded: the issue's "resident memory does not grow with the
 * file". */
static void passed_pages_are_given_back(void **state)
{
	struct cs_reader *r;
	struct cs_record rec;
	size_t samples = BIG_DATA, seen = 0, n = 0;
	long base, peak = 0;
	char *path;
	int ret;

	(void)state;
	r = open_big_profile(&samples, &path, &base);
	while ((ret = cs_reader_next(r, &rec)) > 0) {
		seen += rec.type == CS_RECORD_SAMPLE;
		/* touch every record, as a reader's user does */
		n += ((const uint8_t *)rec.bytes)[rec.size / 2];
		if (seen % 1024 == 0) {
			long kb = rss_file_kb();

			if (kb - base > peak)
				peak = kb - base;
		}
	}
	assert_int_equal(ret, 0);
	cs_reader_free(r);
	unlink(path);
	free(path);
	/* records() has samples of its own */
	assert_true(seen > samples);
	assert_true(n > 0);
	/* 32 MiB kept behind, 8 MiB steps, 8 MiB mapped ahead: well under
	 * the 96 MiB read */
	if (peak >= 64 * 1024)
		fail_msg("RssFile grew by %ld kB reading %u MiB", peak,
			 BIG_DATA >> 20);
}

/* Whether this kernel maps a range on advice (MADV_POPULATE_READ, Linux
 * 5.14): the reader's window ahead is asked for that way. */
static bool kernel_maps_ahead(void)
{
	void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	assert_true(m != MAP_FAILED);
	ok = madvise(m, 4096, 22 /* MADV_POPULATE_READ */) == 0;
	munmap(m, 4096);
	return ok;
}

/* The pages ahead of the reader are mapped a window (8 MiB) at a time
 * from the first record on, not one fault at a time as records are
 * touched: a few records in, far more than they span is resident. */
static void pages_ahead_are_mapped_a_window_at_a_time(void **state)
{
	struct cs_reader *r;
	struct cs_record rec;
	size_t samples = 24u << 20;
	uint64_t first = 0;
	long base, grown;
	char *path;

	(void)state;
	if (!kernel_maps_ahead())
		skip();
	r = open_big_profile(&samples, &path, &base);
	/* read (without touching) the records of the data's first MiB */
	do {
		assert_int_equal(cs_reader_next(r, &rec), 1);
		if (!first)
			first = rec.offset;
	} while (rec.offset - first < (1u << 20));
	grown = rss_file_kb() - base;
	cs_reader_free(r);
	unlink(path);
	free(path);
	if (grown < 4 * 1024)
		fail_msg("RssFile grew by %ld kB one MiB into the data", grown);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_gives_every_record_decoded),
		cmocka_unit_test(pipe_gives_the_same_records_as_the_file),
		cmocka_unit_test(big_endian_gives_the_same_records),
		cmocka_unit_test(big_endian_attr_flags_keep_their_meaning),
		cmocka_unit_test(compressed_records_straddle_payloads),
		cmocka_unit_test(corrupt_compressed_data_is_an_error),
		cmocka_unit_test(inflating_ahead_changes_nothing),
		cmocka_unit_test(peek_tells_the_next_type),
		cmocka_unit_test(reader_freed_while_inflating_ahead),
		cmocka_unit_test(truncated_file_names_the_offset),
		cmocka_unit_test(truncated_stream_names_the_offset),
		cmocka_unit_test(dead_recorder_file_reads_to_the_last_whole_record),
		cmocka_unit_test(auxtrace_payload_is_skipped),
		cmocka_unit_test(misaligned_records_are_read),
		cmocka_unit_test(wrapped_compressed2_size_is_recovered),
		cmocka_unit_test(not_a_perf_file_is_refused),
		cmocka_unit_test(flipped_bytes_never_crash),
		cmocka_unit_test(flipped_feature_bit_drops_the_metadata_with_a_warning),
		cmocka_unit_test(newer_feature_bits_are_harmless),
	};

	const struct CMUnitTest once[] = {
		cmocka_unit_test(passed_pages_are_given_back),
		cmocka_unit_test(pages_ahead_are_mapped_a_window_at_a_time),
	};
	int failed = cmocka_run_group_tests_name("read", tests, NULL, NULL);

	failed += cmocka_run_group_tests_name("read, resident memory", once,
					      NULL, NULL);

	inflate_ahead = true;
	failed += cmocka_run_group_tests_name("read, inflating ahead", tests,
					      NULL, NULL);
	peek_first = true;
	return failed + cmocka_run_group_tests_name("read, inflating ahead, "
						    "each record peeked first",
						    tests, NULL, NULL);
}
