/* inject.c - stitched samples back into an ordinary perf.data (see inject.h). */
#include "outputs/inject.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/read/evlist.h"
#include "lib/stitch/parts.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

/* a record is at most 64 KiB; a re-encoded sample is no bigger */
#define RECORD_MAX 65535

struct written_attr {
	struct cs_perf_attr attr;
	bool rewritten;			/* not as read: see drop_stack_copies() */
	bool kept;
};

struct cs_inject {
	struct cs_writer *w;
	struct cs_session *s;		/* during the run */
	bool passthrough;
	bool started;			/* events and features handed to w */
	const char *path;		/* the input, for messages */
	struct written_attr *attrs;	/* by evsel index */
	size_t nr_attrs;
	struct cs_inject_stats st;
	struct cs_errbuf eb;
	uint64_t *chain;		/* a stitched chain's parts, joined */
	size_t chain_cap;
	uint64_t buf[(RECORD_MAX + 1) / 8];
};

static int fail_writer(struct cs_inject *inj, int err)
{
	const char *msg = cs_writer_error(inj->w);

	cs_error(&inj->eb, err, "%s", msg && *msg ? msg : strerror(-err));
	return 1;
}

/* A dwarf-mode event as written: its samples carry the unwound stack in
 * their callchain instead of registers and a stack copy. */
static bool drop_stack_copies(struct cs_perf_attr *attr)
{
	const uint64_t both = CS_SAMPLE_REGS_USER | CS_SAMPLE_STACK_USER;

	if ((attr->sample_type & both) != both)
		return false;
	attr->sample_type = (attr->sample_type & ~both) | CS_SAMPLE_CALLCHAIN;
	attr->sample_regs_user = 0;
	attr->sample_stack_user = 0;
	attr->flags &= ~CS_ATTR_EXCLUDE_CALLCHAIN_USER;
	return true;
}

/* Keeps the attrs as written, so that samples are encoded as their
 * event says. */
static int keep_attr(struct cs_inject *inj, const struct cs_evsel *ev,
		     const struct cs_perf_attr *attr, bool rewritten)
{
	if (ev->index >= inj->nr_attrs) {
		size_t n = ev->index + 8;
		struct written_attr *a = realloc(inj->attrs, n * sizeof(*a));

		if (!a)
			return -ENOMEM;
		memset(a + inj->nr_attrs, 0, (n - inj->nr_attrs) * sizeof(*a));
		inj->attrs = a;
		inj->nr_attrs = n;
	}
	inj->attrs[ev->index] = (struct written_attr){ *attr, rewritten, true };
	return 0;
}

static bool host_big_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

/* Hands the events and the header metadata to the writer and starts its
 * data. A file names its events in its header; a stream (perf record -o -)
 * in HEADER_ATTR and HEADER_FEATURE records ahead of its data, which the
 * reader has absorbed by the time the first other record comes out. */
static int start(struct cs_inject *inj)
{
	struct cs_session *s = inj->s;
	const struct cs_file_info *info = cs_session_info(s);
	size_t n = cs_session_nr_evsels(s);
	int err = 0;

	if (inj->started)
		return 0;
	inj->started = true;
	if (!n) {
		cs_error(&inj->eb, -EINVAL, "%s: no event (attr) comes before the "
			 "first record", inj->path);
		return 1;
	}
	/* records reach outputs in the file's byte order; the writer wants
	 * native ones, and re-swapping every record type is not done yet */
	if (info && info->big_endian != host_big_endian()) {
		cs_error(&inj->eb, -ENOTSUP, "inject: the input is %s-endian; only "
			 "files in this machine's byte order can be rewritten",
			 info->big_endian ? "big" : "little");
		return 1;
	}
	for (size_t i = 0; i < n && !err; i++) {
		const struct cs_evsel *ev = cs_session_evsel(s, i);
		struct cs_perf_attr attr = *cs_evsel_attr(ev);
		bool rewritten = false;

		if (!inj->passthrough) {
			attr.flags &= ~(CS_ATTR_DEFER_CALLCHAIN | CS_ATTR_DEFER_OUTPUT);
			rewritten = drop_stack_copies(&attr);
		}
		err = keep_attr(inj, ev, &attr, rewritten);
		if (!err)
			err = cs_writer_add_event(inj->w, &attr, ev->name, ev->ids,
						  ev->nr_ids);
	}
	if (!err && info) {
		static const struct { int feat; size_t off; } strs[] = {
			{ CS_FEAT_HOSTNAME, offsetof(struct cs_file_info, hostname) },
			{ CS_FEAT_OSRELEASE, offsetof(struct cs_file_info, os_release) },
			{ CS_FEAT_VERSION, offsetof(struct cs_file_info, perf_version) },
			{ CS_FEAT_ARCH, offsetof(struct cs_file_info, arch) },
			{ CS_FEAT_CPUDESC, offsetof(struct cs_file_info, cpudesc) },
		};

		for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]) && !err; i++) {
			const char *v = *(const char *const *)((const char *)info + strs[i].off);

			if (v)
				err = cs_writer_set_string(inj->w, strs[i].feat, v);
		}
		/* the reader joined the words; one word shows the same line */
		if (!err && info->cmdline)
			err = cs_writer_set_cmdline(inj->w, 1, &info->cmdline);
		if (!err && (info->nr_cpus_online || info->nr_cpus_avail))
			err = cs_writer_set_nr_cpus(inj->w, info->nr_cpus_online,
						    info->nr_cpus_avail);
	}
	if (!err)
		err = cs_writer_begin(inj->w);
	return err ? fail_writer(inj, err) : 0;
}

static int inject_begin(void *ctx, struct cs_session *s)
{
	struct cs_inject *inj = ctx;

	inj->s = s;
	/* a stream's events come as records: start at the first other one */
	return cs_session_nr_evsels(s) ? start(inj) : 0;
}

/* A stream's build ids come as HEADER_BUILD_ID records (a file's are in
 * its header: cmd_inject copies those). */
static int add_build_id_record(struct cs_inject *inj, const struct cs_event *ev)
{
	const uint8_t *p = ev->bytes;
	size_t size = ev->size, nlen;
	uint8_t bid_size = 20;
	int32_t pid;
	int err;

	/* header, pid, build id[20], size, 3 reserved, filename */
	if (size < 8 + 4 + 24 + 1) {
		cs_error(&inj->eb, -EBADMSG, "%s: HEADER_BUILD_ID record at offset %#"
			 PRIx64 " is %zu bytes, too short", inj->path, ev->offset, size);
		return 1;
	}
	if (ev->misc & CS_MISC_BUILD_ID_SIZE)
		bid_size = p[12 + 20];
	nlen = strnlen((const char *)p + 36, size - 36);
	if (bid_size > 20 || nlen == size - 36) {
		cs_error(&inj->eb, -EBADMSG, "%s: HEADER_BUILD_ID record at offset %#"
			 PRIx64 ": build id of %u bytes or unterminated path", inj->path,
			 ev->offset, bid_size);
		return 1;
	}
	memcpy(&pid, p + 8, sizeof(pid));
	err = cs_writer_add_build_id(inj->w, pid, ev->misc, p + 12, bid_size,
				     (const char *)p + 36);
	return err ? fail_writer(inj, err) : 0;
}

static int copy(struct cs_inject *inj, const struct cs_event *ev)
{
	int err = cs_writer_write(inj->w, ev->bytes, ev->size);

	return err ? fail_writer(inj, err) : 0;
}

/* callstitch resolves a stitched sample when its user stack arrives, perf
 * 6.1 when the sample was taken. They differ when the thread changed its
 * own comm or maps in between: a sample taken inside execve gets the new
 * image's user stack, whose COMM and MMAP2s come after it. So a COMM or
 * MMAP the thread writes while some of its samples still wait is written
 * at the oldest waiting sample's time: perf, which sorts by time and keeps
 * the file's order on a tie, then applies it before those samples too. */
static int copy_side_band(struct cs_inject *inj, const struct cs_event *ev)
{
	uint32_t tid = ev->type == CS_RECORD_COMM ? ev->comm.tid : ev->mmap.tid;
	uint64_t since;
	int err;

	if (inj->passthrough || !ev->has_id || !ev->evsel ||
	    !cs_session_waiting_since(inj->s, tid, &since) || since >= ev->id.time)
		return copy(inj, ev);
	memcpy(inj->buf, ev->bytes, ev->size);
	if (cs_encode_set_time(cs_evsel_attr(ev->evsel), inj->buf, ev->size, since))
		return copy(inj, ev);
	inj->st.retimed++;
	err = cs_writer_write(inj->w, inj->buf, ev->size);
	return err ? fail_writer(inj, err) : 0;
}

static int inject_event(void *ctx, const struct cs_event *ev)
{
	struct cs_inject *inj = ctx;

	switch (ev->type) {
	case CS_RECORD_HEADER_BUILD_ID:
		if (cs_session_info(inj->s) && cs_session_info(inj->s)->pipe_mode)
			return add_build_id_record(inj, ev);
		return 0;
	/* absorbed by the reader into the header (attrs, features) or
	 * unpacked into the records that follow: the writer makes its own */
	case CS_RECORD_HEADER_ATTR:
	case CS_RECORD_HEADER_EVENT_TYPE:
	case CS_RECORD_HEADER_TRACING_DATA:
	case CS_RECORD_HEADER_FEATURE:
	case CS_RECORD_COMPRESSED:
	case CS_RECORD_COMPRESSED2:
		return 0;
	case CS_RECORD_FINISHED_ROUND:
		if (!inj->passthrough)
			return 0;	/* samples come late: see inject.h */
		break;
	case CS_RECORD_AUXTRACE:
		/* its payload follows the record outside header.size */
		cs_error(&inj->eb, -ENOTSUP, "%s: AUXTRACE record at offset %#" PRIx64
			 ": AUX area data cannot be rewritten", inj->path, ev->offset);
		return 1;
	default:
		if (!inj->passthrough && ev->type >= CS_RECORD_COMPRESSED2) {
			inj->st.newer_dropped++;
			return 0;
		}
	}
	if (start(inj))
		return 1;
	inj->st.records++;
	if (ev->type == CS_RECORD_COMM || ev->type == CS_RECORD_MMAP ||
	    ev->type == CS_RECORD_MMAP2)
		return copy_side_band(inj, ev);
	return copy(inj, ev);
}

static int inject_deferred(void *ctx, const struct cs_event *ev)
{
	struct cs_inject *inj = ctx;

	if (start(inj))
		return 1;
	if (!inj->passthrough) {
		inj->st.deferred_dropped++;
		return 0;
	}
	inj->st.records++;
	return copy(inj, ev);
}

/* The two parts of a stitched chain (s->user_nr > 0) joined in
 * inj->chain, as encoding needs them: the user marker put back where the
 * session implied it, since perf reads the user part behind it. NULL on
 * -ENOMEM. */
static const uint64_t *join_chain(struct cs_inject *inj,
				  const struct cs_stitched *s)
{
	uint64_t nr = cs_parts_nr(s);

	if (nr > inj->chain_cap) {
		uint64_t *c = realloc(inj->chain, nr * sizeof(*c));

		if (!c)
			return NULL;
		inj->chain = c;
		inj->chain_cap = nr;
	}
	cs_parts_join(s, inj->chain);
	return inj->chain;
}

static int inject_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_inject *inj = ctx;
	const struct cs_event *ev = s->event;
	const struct cs_perf_attr *attr;
	const struct written_attr *w;
	const uint64_t *chain;
	uint64_t nr = cs_parts_nr(s);
	long len;

	if (start(inj))
		return 1;
	inj->st.samples++;
	switch (s->state) {
	case CS_CHAIN_STITCHED:		inj->st.stitched++; break;
	case CS_CHAIN_STITCHED_LATE:	inj->st.stitched_late++; break;
	case CS_CHAIN_KERNEL_ONLY:	inj->st.kernel_only++; break;
	case CS_CHAIN_UNWOUND:		inj->st.unwound++; break;
	default:			inj->st.original++; break;
	}
	if (inj->passthrough)
		return copy(inj, ev);
	if (!ev->evsel) {
		cs_error(&inj->eb, -EINVAL, "%s: sample at offset %#" PRIx64
			 " names no event of the file", inj->path, ev->offset);
		return 1;
	}
	/* events a stream names after the data began are written as read */
	w = ev->evsel->index < inj->nr_attrs &&
	    inj->attrs[ev->evsel->index].kept ? &inj->attrs[ev->evsel->index] : NULL;
	attr = w ? &w->attr : cs_evsel_attr(ev->evsel);
	/* a sample of a rewritten event never goes out as it came */
	if ((!w || !w->rewritten) &&
	    (s->state == CS_CHAIN_ORIGINAL || s->state == CS_CHAIN_UNMERGED))
		return copy(inj, ev);
	chain = s->user_nr ? join_chain(inj, s) : s->chain;
	if (s->user_nr && !chain) {
		cs_error(&inj->eb, -ENOMEM, "%s: out of memory", inj->path);
		return 1;
	}
	for (;;) {
		len = cs_encode_sample(attr, &ev->sample, chain, nr,
				       inj->buf, sizeof(inj->buf));
		if (len != -EINVAL)
			break;
		/* too big for one record: the outermost user frames go, never
		 * the kernel part */
		uint64_t keep = nr;

		for (uint64_t i = 0; i < nr; i++)
			if (chain[i] == CS_CONTEXT_USER) {
				keep = i + 2;
				break;
			}
		if (nr <= keep)
			break;
		if (nr == cs_parts_nr(s))
			inj->st.truncated++;
		nr = nr - keep > 64 ? nr - 64 : keep;
	}
	if (len < 0) {
		cs_error(&inj->eb, (int)len, "%s: sample at offset %#" PRIx64
			 " cannot be re-encoded with its %" PRIu64 "-entry stack: %s",
			 inj->path, ev->offset, cs_parts_nr(s),
			 strerror((int)-len));
		return 1;
	}
	len = cs_writer_write(inj->w, inj->buf, (size_t)len);
	return len ? fail_writer(inj, (int)len) : 0;
}

static int inject_end(void *ctx, struct cs_session *s)
{
	struct cs_inject *inj = ctx;
	int err;

	(void)s;
	if (start(inj))		/* an input of nothing but its header */
		return 1;
	err = cs_writer_finish(inj->w);
	return err ? fail_writer(inj, err) : 0;
}

const struct cs_output_ops cs_inject_ops = {
	.begin = inject_begin,
	.sample = inject_sample,
	.deferred = inject_deferred,
	.event = inject_event,
	.end = inject_end,
};

int cs_inject_new(struct cs_writer *w, const struct cs_inject_opts *o,
		  struct cs_inject **out)
{
	struct cs_inject *inj = calloc(1, sizeof(*inj));

	*out = inj;
	if (!inj)
		return -ENOMEM;
	inj->w = w;
	inj->passthrough = o && o->passthrough;
	inj->path = o && o->input ? o->input : "input";
	return 0;
}

const struct cs_inject_stats *cs_inject_stats(const struct cs_inject *inj)
{
	return &inj->st;
}

const char *cs_inject_error(const struct cs_inject *inj)
{
	return inj->eb.msg;
}

void cs_inject_free(struct cs_inject *inj)
{
	if (!inj)
		return;
	free(inj->attrs);
	free(inj->chain);
	free(inj);
}
