/* session.c - the pipeline: reader -> order -> decode -> machine + stitcher
 * -> the caller's cs_output_ops.
 *
 * Records are queued undecoded (the order module only needs their time) and
 * decoded once, when they leave the queue in time order. Side-band records
 * go to the machine before the output sees them, so a sample always
 * resolves against the maps of its moment; an EXIT reaches the machine only
 * after the stitcher has released that thread's waiting samples.
 *
 * Pulled (cs_session_next()), the same pipeline runs in steps: the samples
 * one record releases are copied into a queue and the pipeline pauses
 * after that record - in the order module too, in the middle of a round -
 * so that the machine stands where it would for the callback.
 *
 * A sample that carries its user registers and a copy of its user stack
 * (--call-graph dwarf) gets its user part from the unwinder on its way to
 * the output, so that every output sees whole stacks; the completeness
 * tally, when asked for, sees every sample last.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"
#include "lib/completeness/completeness.h"
#include "lib/machine/machine.h"
#include "lib/machine/unpack.h"
#include "lib/order/order.h"
#include "lib/read/decode.h"
#include "lib/read/evlist.h"
#include "lib/read/reader.h"
#include "lib/session/change.h"
#include "lib/session/interrupt.h"
#include "lib/stitch/parts.h"
#include "lib/stitch/stitch.h"
#include "lib/offcpu/offcpu.h"
#include "lib/trace/tracepoints.h"
#include "lib/unwind/arch.h"
#include "lib/unwind/unwind.h"
#include "lib/util/errbuf.h"
#include "lib/util/handoff.h"

#define PROGRESS_STEP	(4u << 20)
/* Most user frames unwound per sample. A stack copy holds at most 64 KiB
 * and a frame takes 8 bytes at least: the copy ends a stack first. */
#define UNWIND_MAX	8192

/* Samples released but not yet pulled, each a struct pulled followed by
 * its chain and its record, in one buffer emptied before it refills. */
struct pulled {
	struct cs_stitched st;		/* event and chain are fixed up on pop */
	uint64_t offset;		/* of the record */
	size_t size;			/* bytes of the record */
	size_t next;			/* buffer offset of the next entry */
};

struct pull_queue {
	unsigned char *buf;
	size_t head, tail, cap;
	struct cs_event ev;		/* the sample last returned */
	struct cs_stitched st;
	bool ended;			/* the input is read and flushed */
};

struct cs_session {
	struct cs_session_opts opts;
	struct cs_reader *reader;
	struct cs_machine *machine;
	struct cs_order *order;
	struct cs_stitch *stitch;
	const struct cs_evlist *evlist;
	const char *path;		/* for messages */
	char *archive_dir;		/* --archive, unpacked; removed at free */

	const struct cs_output_ops *ops;
	void *ctx;
	bool ran;
	bool pulled;			/* cs_session_next(), not _run() */
	struct pull_queue pull;

	size_t build_ids_added;		/* pipe mode: they come as records */
	bool build_ids_dirty;
	uint64_t next_progress;
	uint64_t pos;			/* end of the last record read */
	bool input_done;		/* the reader has given its last record */
	struct cs_handoff *ahead;	/* reading ahead: the reading thread's */
	/* cs_session_interrupt(): the flag, and for a stream the eventfd
	 * its reads also wait on (-1: none), made before the run starts */
	atomic_bool interrupted;
	int wake_fd;
	/* the reading thread stopped before a record this thread reads:
	 * written there, read here once it has ended */
	bool ahead_handed_back;
	struct cs_errbuf ahead_eb;	/* its errors, and the reader's meanwhile */
	uint64_t ahead_done;		/* the furthest record end taken: progress */

	struct cs_offcpu *offcpu;	/* opts.off_cpu: between stitcher and output */
	struct cs_tracepoints *tracepoints;	/* parsed on first use */
	bool tracepoints_failed;
	struct cs_unwind *unwind;	/* made at the first stack copy */
	bool unwind_tried;
	uint64_t *chain;		/* unwound chains are built here */
	size_t chain_cap;
	uint64_t refused_offset;	/* the first sample not unwound, */
	const char *refused_why;	/* and why */
	struct cs_complete *complete;	/* NULL unless asked for */
	cs_stitched_fn sample;		/* where samples go: the output's */
	void *sample_ctx;		/* callback, or the pull queue */
	cs_change_fn on_change;		/* before the machine changes */
	void *change_ctx;

	struct cs_stats stats;
	struct cs_errbuf eb;
	struct cs_errbuf warning;
};

static const struct cs_output_ops no_ops;

/* ---- build ids ---- */

struct bid_walk {
	struct cs_session *s;
	size_t index;
};

static int add_build_id(void *ctx, int32_t pid, uint16_t misc,
			const uint8_t *build_id, size_t size, const char *path)
{
	struct bid_walk *w = ctx;
	unsigned int mode = misc & CS_MISC_CPUMODE_MASK;
	int err;

	(void)pid;
	/* the reader lists them in the order it found them: skip those the
	 * machine already has */
	if (w->index++ < w->s->build_ids_added)
		return 0;
	err = cs_machine_add_build_id(w->s->machine, path, build_id, size,
				      mode == CS_MISC_KERNEL ||
				      mode == CS_MISC_GUEST_KERNEL);
	if (err)
		return err;
	w->s->build_ids_added++;
	return 0;
}

/* The output's cs_session_on_change() hook, if any: the machine is
 * about to take ev (NULL: build ids). */
static int before_change(struct cs_session *s, const struct cs_event *ev)
{
	return s->on_change ? s->on_change(s->change_ctx, ev) : 0;
}

static int sync_build_ids(struct cs_session *s)
{
	struct bid_walk w = { .s = s };
	int err = before_change(s, NULL);

	if (err)
		return err;
	err = cs_reader_for_each_build_id(s->reader, add_build_id, &w);
	s->build_ids_dirty = false;
	if (err < 0)
		return cs_error(&s->eb, err, "%s: cannot keep the build ids: %s",
				s->path, strerror(-err));
	return 0;
}

/* ---- open ---- */

/* Whether symbols are loaded ahead (cs_session_opts.preload): the header
 * lists the binaries with samples - a pipe lists them at its end, if at
 * all, too late to help - and the caller resolves every sample's frames. */
static bool preloads(const struct cs_session *s)
{
	const struct cs_file_info *info = cs_reader_info(s->reader);

	if (s->opts.jobs < 2 || !(s->opts.preload & CS_PRELOAD_SYMBOLS) ||
	    !info || info->pipe_mode)
		return false;
	if (s->opts.preload & CS_PRELOAD_NOT_TRACEPOINTS)
		for (size_t i = 0; i < cs_session_nr_evsels(s); i++)
			if (cs_session_evsel(s, i)->type == CS_PERF_TYPE_TRACEPOINT)
				return false;
	return true;
}

/* The caller's options as this library knows them: a caller built against
 * an older header passes fewer bytes (the rest stay zero); one built
 * against a newer header must leave the options we do not know unset. */
static int copy_opts(struct cs_session *s, const struct cs_session_opts *o)
{
	const unsigned char *p = (const unsigned char *)o;

	if (!o || o->sz < offsetof(struct cs_session_opts, path))
		return cs_error(&s->eb, -EINVAL, "%s: cs_session_opts.sz is not "
				"set (declare the options with CS_SESSION_OPTS())",
				s->path);
	for (size_t i = sizeof(s->opts); i < o->sz; i++)
		if (p[i])
			return cs_error(&s->eb, -EINVAL, "%s: an option this "
					"libcallstitch does not know is set "
					"(byte %zu of cs_session_opts)", s->path, i);
	memcpy(&s->opts, o, o->sz < sizeof(s->opts) ? o->sz : sizeof(s->opts));
	s->opts.sz = sizeof(s->opts);
	return 0;
}

int cs_session_open(const struct cs_session_opts *opts, struct cs_session **out)
{
	struct cs_session *s = calloc(1, sizeof(*s));
	const struct cs_file_info *info;
	struct cs_machine_opts mo = { 0 };
	const char *path;
	int fd, err;

	*out = s;
	if (!s)
		return -ENOMEM;
	s->path = "cs_session_open";
	s->wake_fd = -1;
	atomic_init(&s->interrupted, false);
	err = copy_opts(s, opts);
	if (err)
		return err;
	/* fd 0 is "no fd" (zeroed options read path); stdin is path "-" */
	fd = s->opts.fd > 0 ? s->opts.fd : -1;
	path = s->opts.path ? s->opts.path : fd >= 0 ? "-" : "perf.data";
	s->path = path;

	err = cs_reader_open(path, fd, &s->eb, &s->reader);
	if (err < 0)
		return cs_error(&s->eb, err, "%s: %s", path, strerror(-err));
	s->path = cs_reader_path(s->reader);
	s->evlist = cs_reader_evlist(s->reader);
	cs_reader_inflate_ahead(s->reader, s->opts.jobs >= 2);

	info = cs_reader_info(s->reader);
	if (s->opts.archive) {
		err = cs_unpack(s->opts.archive, &s->archive_dir, &s->eb);
		if (err < 0)
			return err;
	}
	mo.kallsyms = s->opts.kallsyms;
	mo.symfs = s->opts.symfs;
	mo.archive = s->archive_dir;
	mo.sysroot = s->opts.sysroot;
	mo.jit_map = s->opts.jit_map;
	mo.no_debuginfod = s->opts.no_debuginfod;
	mo.hooks.progress = s->opts.fetch_progress;
	mo.hooks.warning = s->opts.warning;
	mo.hooks.ctx = s->opts.progress_ctx;
	if (info) {
		mo.hostname = info->hostname;
		mo.os_release = info->os_release;
	}
	if (preloads(s)) {
		/* as many as -j: while the first tables load, the reading
		 * thread mostly waits for them (docs/performance.md) */
		mo.preload_workers = s->opts.jobs;
		mo.preload_inlines = s->opts.preload & CS_PRELOAD_INLINES;
	}
	err = cs_machine_new(&mo, &s->machine);
	if (err < 0)
		return cs_error(&s->eb, err, "%s: %s", s->path, strerror(-err));
	err = sync_build_ids(s);
	if (err)
		return err;
	err = cs_machine_preload(s->machine);
	if (err < 0)
		return cs_error(&s->eb, err, "%s: %s", s->path, strerror(-err));
	return 0;
}

/* ---- delivery, in time order ---- */

static int no_sample(void *ctx, const struct cs_stitched *st)
{
	(void)ctx;
	(void)st;
	return 0;
}

/* Adds a line to the run's warnings (cs_session_warning()). */
__attribute__((format(printf, 2, 3)))
static void warn(struct cs_session *s, const char *fmt, ...)
{
	size_t n = strlen(s->warning.msg);
	va_list ap;

	if (n + 2 >= sizeof(s->warning.msg))
		return;
	if (n)
		s->warning.msg[n++] = '\n';
	va_start(ap, fmt);
	vsnprintf(s->warning.msg + n, sizeof(s->warning.msg) - n, fmt, ap);
	va_end(ap);
}

/* ---- unwinding --------------------------------------------------------- */

struct find_ctx {
	struct cs_machine *machine;
	uint32_t pid;
};

static bool find_module(void *ctx, uint64_t addr, struct cs_unwind_module *mod)
{
	struct find_ctx *f = ctx;

	return cs_machine_unwind_module(f->machine, f->pid, addr, mod);
}

static bool has_stack_copy(const struct cs_session *s, const struct cs_event *ev)
{
	const uint64_t both = CS_SAMPLE_REGS_USER | CS_SAMPLE_STACK_USER;

	return !s->opts.no_merge && ev->evsel &&
	       (cs_evsel_attr(ev->evsel)->sample_type & both) == both;
}

/* The unwinder, made for the file's architecture at the first stack copy;
 * s->unwind stays NULL (and a warning says why) for one we cannot unwind.
 * Returns 0 or -ENOMEM. */
static int make_unwinder(struct cs_session *s)
{
	const struct cs_file_info *info = cs_reader_info(s->reader);
	const struct cs_unwind_arch *arch;

	s->unwind_tried = true;
	arch = info && info->arch ? cs_unwind_arch_find(info->arch) :
	       cs_unwind_arch_host();
	if (!arch) {
		warn(s, "%s: user stacks of %s are not unwound: only x86_64's "
		     "registers are known", s->path,
		     info && info->arch ? info->arch : "this architecture");
		return 0;
	}
	return cs_unwind_new(arch, &s->unwind);
}

/* The sample's kernel part, then the unwound user part, in out. */
static int unwind_sample(struct cs_session *s, const struct cs_stitched *st,
			 struct cs_stitched *out, struct cs_unwind_result *res)
{
	const struct cs_sample *smp = &st->event->sample;
	const struct cs_perf_attr *attr = cs_evsel_attr(st->event->evsel);
	struct find_ctx fctx = { s->machine, smp->pid };
	struct cs_unwind_input in = {
		.abi = smp->user_regs_abi,
		.regs_mask = attr->sample_regs_user,
		.regs = smp->user_regs,
		.stack = smp->stack_user,
		.stack_size = smp->stack_user_size,
		.stack_dyn_size = smp->stack_user_dyn_size,
	};
	uint64_t nk = 0;
	int err;

	/* what the kernel recorded of the user part (nothing, with perf's
	 * exclude_callchain_user) gives way to the unwound one */
	while (nk < st->chain_nr && st->chain[nk] != CS_CONTEXT_USER)
		nk++;
	if (nk + 1 + UNWIND_MAX > s->chain_cap) {	/* once, or a deeper kernel part */
		size_t cap = nk + 1 + UNWIND_MAX + 256;
		uint64_t *c = realloc(s->chain, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		s->chain = c;
		s->chain_cap = cap;
	}
	memcpy(s->chain, st->chain, nk * sizeof(*s->chain));
	err = cs_unwind_sample(s->unwind, &in, find_module, &fctx,
			       s->chain + nk + 1, UNWIND_MAX, res);
	if (err)
		return err;
	*out = *st;
	out->chain = s->chain;
	out->chain_nr = nk;
	out->state = CS_CHAIN_UNWOUND;
	if (res->nr) {
		s->chain[nk] = CS_CONTEXT_USER;
		out->chain_nr = nk + 1 + res->nr;
		s->stats.unwound++;
	}
	if (res->stop == CS_UNWIND_BAD_INPUT && !s->stats.unwind_refused++) {
		s->refused_offset = st->event->offset;
		s->refused_why = res->why;
	}
	return 0;
}

/* Between the stitcher and the output: unwinding, then the tally. */
static int on_sample(void *ctx, const struct cs_stitched *st)
{
	struct cs_session *s = ctx;
	struct cs_unwind_result res, *unwound = NULL;
	struct cs_stitched out;
	int err;

	if (st->state == CS_CHAIN_ORIGINAL && has_stack_copy(s, st->event)) {
		if (!s->unwind_tried && (err = make_unwinder(s)))
			return err;
		if (s->unwind) {
			err = unwind_sample(s, st, &out, &res);
			if (err)
				return err;
			st = &out;
			unwound = &res;
		}
	}
	if (s->complete) {
		err = cs_complete_add(s->complete, s->machine, st, unwound);
		if (err)
			return err;
	}
	return s->sample(s->sample_ctx, st);
}

/* Whether samples must pass through on_sample(): a stream names its events
 * later, so it might carry stack copies. */
static bool needs_on_sample(const struct cs_session *s)
{
	const struct cs_file_info *info = cs_reader_info(s->reader);

	if (s->opts.completeness || (info && info->pipe_mode))
		return true;
	for (size_t i = 0; i < cs_session_nr_evsels(s); i++) {
		const struct cs_evsel *ev = cs_session_evsel(s, i);

		if (cs_evsel_attr(ev)->sample_type & (CS_SAMPLE_REGS_USER | CS_SAMPLE_STACK_USER))
			return true;
	}
	return false;
}

static int to_output(struct cs_session *s, const struct cs_event *ev)
{
	int err = before_change(s, ev);

	if (!err)
		err = cs_machine_event(s->machine, ev);
	if (err)
		return err;
	return s->ops->event ? s->ops->event(s->ctx, ev) : 0;
}

/* The off-CPU stage sees events before the stitcher (an EXIT after it). */
static int offcpu_event(struct cs_session *s, const struct cs_event *ev)
{
	struct cs_tracepoints *tp = NULL;

	if (!s->offcpu)
		return 0;
	if (ev->type == CS_RECORD_SAMPLE && ev->evsel &&
	    ev->evsel->type == CS_PERF_TYPE_TRACEPOINT)
		tp = cs_session_tracepoints(s);
	return cs_offcpu_event(s->offcpu, ev, tp);
}

/* Hands one decoded record to the stitcher, the machine and the output. */
static int dispatch(struct cs_session *s, const struct cs_event *ev,
		    bool stable)
{
	int err;

	if (s->offcpu && ev->type != CS_RECORD_EXIT) {
		err = offcpu_event(s, ev);
		if (err)
			return err;
	}
	switch (ev->type) {
	case CS_RECORD_SAMPLE:
		/* a mapped record lives as long as the reader, which outlives
		 * the stitcher: a waiting sample need not copy it */
		if (stable)
			return cs_stitch_event_stable(s->stitch, ev);
		return cs_stitch_event(s->stitch, ev);
	case CS_RECORD_CALLCHAIN_DEFERRED:
		/* the raw record first, then the samples it completes */
		if (s->ops->deferred) {
			err = s->ops->deferred(s->ctx, ev);
			if (err)
				return err;
		}
		/* its ips, kept for late samples, may stay where they are */
		if (stable)
			return cs_stitch_event_stable(s->stitch, ev);
		return cs_stitch_event(s->stitch, ev);
	case CS_RECORD_LOST:
		s->stats.lost_events += ev->lost.lost;
		break;
	case CS_RECORD_LOST_SAMPLES:
		s->stats.lost_samples += ev->lost.lost;
		break;
	case CS_RECORD_EXIT:
		break;
	default:
		return to_output(s, ev);
	}
	/* EXIT and LOST: the stitcher releases what they end, then the
	 * machine and the output see them */
	err = cs_stitch_event(s->stitch, ev);
	if (!err && ev->type == CS_RECORD_EXIT)
		err = offcpu_event(s, ev);
	if (err)
		return err;
	return to_output(s, ev);
}

/* The stitcher's hook: a waiting sample's record decoded when it goes
 * out, into the stitcher's own event, which only this writes. */
static int decode_again(void *ctx, const void *bytes, size_t size,
			uint64_t offset, bool filed, unsigned int evsel,
			struct cs_event *ev)
{
	struct cs_session *s = ctx;

	if (filed)
		return cs_decode_filed(s->evlist, bytes, size, offset, evsel,
				       ev);
	return cs_decode_again(s->evlist, bytes, size, offset, s->path, ev,
			       &s->eb);
}

static int deliver(void *ctx, const void *bytes, size_t size, uint64_t offset,
		   bool stable)
{
	struct cs_session *s = ctx;
	struct cs_wait_key key;
	struct cs_event ev;
	bool waits = false;
	int err;

	/* a deferred sample that is to wait is filed by its key: decoded
	 * once, when it goes out, not now and again then (the off-CPU stage
	 * sees every event first, so not with it) */
	if (s->offcpu)
		err = cs_decode(s->evlist, bytes, size, offset, s->path, &ev,
				&s->eb);
	else
		err = cs_decode_or_wait(s->evlist, bytes, size, offset, s->path,
					&ev, &key, &s->eb);
	if (err == 1) {
		err = cs_stitch_park(s->stitch, &key, bytes, size, offset,
				     stable, &waits);
		/* it goes out now after all (stitched late): decoded from
		 * the checks its key was read with */
		if (!err && !waits)
			cs_decode_waiting(s->evlist, bytes, size, offset, &ev);
	}
	if (err)
		return err;
	if (!waits)
		err = dispatch(s, &ev, stable);
	/* pulled: stop after a record that released samples, with the
	 * machine where the callback would have seen it */
	if (!err && s->pulled && s->pull.head != s->pull.tail)
		return CS_ORDER_PAUSE;
	return err;
}

/* ---- run ---- */

static void progress(struct cs_session *s, uint64_t done, bool last)
{
	if (!s->opts.progress || (!last && done < s->next_progress))
		return;
	s->next_progress = done + PROGRESS_STEP;
	s->opts.progress(s->opts.progress_ctx, done,
			 cs_reader_total(s->reader));
}

static int queue(struct cs_session *s, const struct cs_record *rec)
{
	int err;

	if (s->opts.ordered_off)
		return deliver(s, rec->bytes, rec->size, rec->offset,
			       rec->stable);
	err = cs_order_push(s->order, rec->time, rec->bytes, rec->size,
			    rec->offset, rec->stable);
	if (err)
		return err;
	if (rec->type == CS_RECORD_FINISHED_ROUND ||
	    rec->type == CS_RECORD_FINISHED_INIT)
		return cs_order_round_end(s->order);
	return 0;
}

/* Reads up to limit records (the rest of the input: SIZE_MAX) and queues
 * them, counting them in *st (*pos: where the last ends). Ahead, on the
 * reading thread: stops before a record it must not read there (sets
 * ahead_handed_back: a return value would be one an output's callback
 * may return too, and its "stop" would be taken for this), calls no
 * progress and reports to eb. */
static bool may_read_ahead(struct cs_session *s);

static int read_records(struct cs_session *s, bool ahead, size_t limit,
			struct cs_stats *st, uint64_t *pos,
			struct cs_errbuf *eb)
{
	struct cs_record rec;
	/* the common record's counts, kept in registers across the push and
	 * added to *st and *pos before anything else reads them */
	uint64_t records = 0, bytes = 0, end = *pos;
	bool quick;
	int more = 0, err = 0;

	/* the common record: a kernel one (no event, build id or round news),
	 * queued by its time; the rest takes the long way */
	quick = s->order && !s->build_ids_dirty && (ahead || !s->opts.progress);
	while (limit-- && !s->input_done) {
		if (ahead && !may_read_ahead(s)) {
			s->ahead_handed_back = true;
			break;
		}
		more = cs_reader_next(s->reader, &rec);
		if (more <= 0)
			break;
		records++;
		bytes += rec.size;
		end = rec.offset + rec.size;
		if (rec.type < CS_RECORD_HEADER_ATTR && quick) {
			st->by_type[rec.type]++;
			err = cs_order_push(s->order, rec.time, rec.bytes,
					    rec.size, rec.offset, rec.stable);
			if (err)
				break;
			continue;
		}
		st->by_type[rec.type < 127 ? rec.type : 127]++;
		st->records += records;
		st->bytes += bytes;
		*pos = end;
		records = bytes = 0;
		if (s->opts.progress && !ahead)
			progress(s, s->pos, false);
		/* pipe mode: events arrive as records */
		if (rec.type == CS_RECORD_HEADER_ATTR ||
		    rec.type == CS_RECORD_EVENT_UPDATE)
			s->evlist = cs_reader_evlist(s->reader);

		if (rec.type == CS_RECORD_HEADER_BUILD_ID) {
			s->build_ids_dirty = true;
		} else if (s->build_ids_dirty) {
			err = sync_build_ids(s);
			if (err)
				return err;
		}
		quick = s->order && !s->build_ids_dirty &&
			(ahead || !s->opts.progress);
		err = queue(s, &rec);
		if (err)
			return err;
	}
	st->records += records;
	st->bytes += bytes;
	*pos = end;
	if (err)
		return err;
	if (more < 0)
		return cs_error(eb, more, "%s: %s", s->path, strerror(-more));
	if (!more && !s->input_done) {
		s->input_done = true;
		if (s->build_ids_dirty)
			return sync_build_ids(s);
	}
	return 0;
}

/* ---- reading ahead ----
 *
 * With opts.read_ahead, a thread of its own reads the file and runs the
 * order queue; the records it delivers go to this thread in batches
 * (handoff.h), where they are decoded, stitched and handed to the output
 * exactly as without it. The reading thread owns the reader, the order
 * queue and the record counts until it returns; it stops before any
 * record that changes what this thread reads (events, build ids, file
 * info), or whose type the reader cannot tell (cs_reader_peek_type()),
 * and this thread reads that one itself before starting it again. A
 * stream's and a compressed payload's records come out of buffers the
 * reader reuses: the order queue copies them, and the batch copies them
 * again, since the queue frees its copy once delivered. Blocked on a
 * quiet pipe, the reading thread sees this thread's error only when the
 * read returns.
 */

/* A delivered record in a batch; bytes NULL: a copy follows. */
struct ahead_rec {
	const void *bytes;
	uint64_t offset;
	uint32_t size;
	uint32_t stable;
};

static bool may_read_ahead(struct cs_session *s)
{
	int type;

	if (!s->opts.read_ahead || s->pulled || !s->order || s->input_done ||
	    s->build_ids_dirty)
		return false;
	/* with jobs 2 a file's inflater has the second CPU: reading ahead
	 * through the payloads too would put three threads on two (inject
	 * -j 2 of a -z profile: 0.211 -> 0.229 s); from jobs 3 each has its
	 * own. A -z stream has no inflater, but the reading thread that
	 * inflates gained nothing on two CPUs either (stitch_only: 0.99x),
	 * so it is kept the same way */
	if (s->opts.jobs == 2 && cs_reader_compressed(s->reader))
		return false;
	/* a compressed record only feeds the reader its payload */
	type = cs_reader_peek_type(s->reader);
	return (type >= 0 && type < CS_RECORD_HEADER_ATTR) ||
	       type == CS_RECORD_FINISHED_ROUND ||
	       type == CS_RECORD_FINISHED_INIT ||
	       type == CS_RECORD_COMPRESSED ||
	       type == CS_RECORD_COMPRESSED2;
}

/* The order queue's deliver when reading ahead may be on: on the reading
 * thread, into the batch; on this one, to deliver(). */
static int deliver_or_send(void *ctx, const void *bytes, size_t size,
			   uint64_t offset, bool stable)
{
	struct cs_session *s = ctx;
	struct ahead_rec *r;

	if (!s->ahead)
		return deliver(ctx, bytes, size, offset, stable);
	if (cs_handoff_error(s->ahead))
		return -ECANCELED;	/* this thread failed: stop reading */
	r = cs_handoff_append(s->ahead, sizeof(*r) + (stable ? 0 : size));
	if (!r)
		return -ENOMEM;
	r->bytes = stable ? bytes : NULL;
	r->offset = offset;
	r->size = (uint32_t)size;
	r->stable = stable;
	if (!stable)
		memcpy(r + 1, bytes, size);
	return 0;
}

/* What the reading thread counts, apart from the session: its stats
 * share cache lines with the counts the decoding thread keeps, and each
 * line would go back and forth between the two CPUs with every record.
 * read_ahead() owns it and adds it to the session's when the thread ends. */
struct ahead_run {
	struct cs_session *s;
	struct cs_stats counts;		/* records, bytes, by_type */
	uint64_t pos;
};

static int read_ahead_main(void *ctx, struct cs_handoff *h)
{
	struct ahead_run *run = ctx;
	struct cs_session *s = run->s;
	int err;

	s->ahead = h;
	err = read_records(s, true, SIZE_MAX, &run->counts, &run->pos,
			   &s->ahead_eb);
	s->ahead = NULL;
	return err;
}

static size_t ahead_rec_size(const struct ahead_rec *r)
{
	return cs_handoff_record_size(sizeof(*r) + (r->stable ? 0 : r->size));
}

/* How many records ahead take_batch() asks for a record's bytes, and how
 * many bytes of the batch ahead of that record it asks for (about 20
 * records more: 256, 512 and 1024 measured the same). */
#define AHEAD_PREFETCH		8
#define AHEAD_PREFETCH_BATCH	512

/* Asks for the lines of a record the decoding reads: its header, and the
 * end of its chain, where a deferred sample's marker is. */
static void prefetch_rec(const struct ahead_rec *r)
{
	const char *b = r->bytes ? r->bytes : (const void *)(r + 1);

	/* addresses as integers: a prefetch may point past the record or
	 * the batch, where C's pointer arithmetic may not */
	uintptr_t at = (uintptr_t)b;

	__builtin_prefetch(b);
	__builtin_prefetch((const void *)(at + 64));
	__builtin_prefetch((const void *)(at + r->size - 16));
	/* and the batch's line further on: the reading thread wrote it on
	 * its CPU, and reading it here to find the next record's bytes
	 * would wait on it */
	__builtin_prefetch((const void *)((uintptr_t)r + AHEAD_PREFETCH_BATCH));
}

/* On this thread: a batch of delivered records, as deliver() takes them.
 * Their bytes were last read on the reading thread's CPU, not in file
 * order, so nothing has brought them into this CPU's caches: asked for a
 * few records ahead, they come in while the records before are decoded
 * (on an EPYC's two vCPUs, deliver() waited on them for a quarter of its
 * time without). */
static int take_batch(void *ctx, const void *buf, size_t len)
{
	struct cs_session *s = ctx;
	const unsigned char *p = buf, *end = p + len, *next = p;
	uint64_t done = s->ahead_done;
	int err = 0;

	for (int i = 0; i < AHEAD_PREFETCH && next < end; i++) {
		prefetch_rec((const void *)next);
		next += ahead_rec_size((const void *)next);
	}
	while (p < end && !err) {
		const struct ahead_rec *r = (const void *)p;
		const void *bytes = r->bytes ? r->bytes : r + 1;

		if (next < end) {
			prefetch_rec((const void *)next);
			next += ahead_rec_size((const void *)next);
		}

		err = deliver(s, bytes, r->size, r->offset, r->stable);
		s->stats.read_ahead++;
		p += ahead_rec_size(r);
		if (r->offset + r->size > done)
			done = r->offset + r->size;
	}
	/* once a batch: the session's fields beside it are the reading
	 * thread's to read */
	s->ahead_done = done;
	if (s->opts.progress)
		progress(s, done, false);
	return err;
}

/* Reads ahead on a thread of its own until it hands back (then
 * ahead_handed_back) or the input ends. Returns 0, or the first error in
 * stream order: this thread's (what it delivered came first), else the
 * reading's. */
static int read_ahead(struct cs_session *s)
{
	struct ahead_run *run = calloc(1, sizeof(*run));
	struct cs_handoff *h;
	int err;

	if (!run)	/* read here, as without the option */
		return read_records(s, false, SIZE_MAX, &s->stats, &s->pos, &s->eb);
	run->s = s;
	run->pos = s->pos;
	s->ahead_handed_back = false;
	/* before the thread starts: from then on the reader is its */
	cs_error_clear(&s->ahead_eb);
	cs_reader_set_errbuf(s->reader, &s->ahead_eb);
	if (cs_handoff_new_producer(read_ahead_main, run, &h)) {
		cs_reader_set_errbuf(s->reader, &s->eb);
		free(run);
		return read_records(s, false, SIZE_MAX, &s->stats, &s->pos, &s->eb);
	}
	err = cs_handoff_drain(h, take_batch, s);
	cs_reader_set_errbuf(s->reader, &s->eb);
	s->pos = run->pos;
	s->stats.records += run->counts.records;
	s->stats.bytes += run->counts.bytes;
	for (size_t t = 0; t < 128; t++)
		s->stats.by_type[t] += run->counts.by_type[t];
	free(run);
	/* the decoding thread's error came first in the stream; only the
	 * reading thread writes ahead_eb */
	if (err < 0 && s->ahead_eb.msg[0] && !s->eb.msg[0])
		memcpy(&s->eb, &s->ahead_eb, sizeof(s->eb));
	return err;
}

/* Reads to the end of the input and delivers everything. Pulled, it may
 * return CS_ORDER_PAUSE with samples queued; the next call goes on from
 * there (the reader, the order queue and the stitcher keep their places). */
static int read_all(struct cs_session *s)
{
	int err;

	if (s->order && cs_order_paused(s->order)) {
		err = cs_order_resume(s->order);
		if (err)
			return err;
	}
	while (!s->input_done) {
		if (may_read_ahead(s)) {
			err = read_ahead(s);
			/* the record it stopped before is read here */
			if (!err && s->ahead_handed_back)
				err = read_records(s, false, 1, &s->stats, &s->pos,
						   &s->eb);
		} else {	/* a record at a time while reading ahead may resume */
			err = read_records(s, false, s->opts.read_ahead && !s->pulled ?
					   1 : SIZE_MAX, &s->stats, &s->pos, &s->eb);
		}
		/* asked to stop: whatever the read met, the output says why */
		if (atomic_load(&s->interrupted))
			return 1;
		if (err)
			return err;
	}
	if (s->order) {
		err = cs_order_flush(s->order);
		if (err)
			return err;
	}
	err = cs_stitch_flush(s->stitch);
	if (!err && s->offcpu)
		err = cs_offcpu_flush(s->offcpu);
	return err;
}

static int start(struct cs_session *s, const struct cs_output_ops *ops,
		 void *ctx, cs_stitched_fn sample, void *sample_ctx)
{
	enum cs_stitch_form form = CS_STITCH_JOINED;
	int err;

	if (!s->reader || !s->machine)
		return cs_error(&s->eb, -EINVAL, "%s: the profile was not opened",
				s->path);
	if (s->ran)
		return cs_error(&s->eb, -EINVAL, "%s: the session has already run",
				s->path);
	s->ran = true;
	s->ops = ops ? ops : &no_ops;
	s->ctx = ctx;
	/* a stream's read may wait for bytes that do not come: then only
	 * this wakes it (without one, an interrupt waits for the bytes) */
	if (cs_reader_info(s->reader)->pipe_mode &&
	    (s->wake_fd = eventfd(0, EFD_CLOEXEC)) >= 0)
		cs_reader_set_wake(s->reader, s->wake_fd);

	/* the stitcher calls the output itself, one call less per sample,
	 * unless stacks are unwound or classified on the way; with off-CPU
	 * time, the stage that holds switch-outs comes last before it */
	if (s->opts.completeness) {
		err = cs_complete_new(&s->complete);
		if (err)
			return cs_error(&s->eb, err, "%s: out of memory", s->path);
	}
	if (s->opts.off_cpu) {
		err = cs_offcpu_new(sample, sample_ctx, &s->stats, &s->offcpu);
		if (err)
			return cs_error(&s->eb, err, "%s: %s", s->path, strerror(-err));
		sample = cs_offcpu_sample;
		sample_ctx = s->offcpu;
	}
	s->sample = sample;
	s->sample_ctx = sample_ctx;
	/* chains in parts when the caller takes them (the tally does not),
	 * the user part without its marker when the caller puts it back */
	if (s->opts.chain_parts && !s->complete)
		form = s->opts.user_marker_implied ?
		       CS_STITCH_PARTS_MARKER_IMPLIED : CS_STITCH_PARTS;
	if (needs_on_sample(s))
		err = cs_stitch_new(!s->opts.no_merge, form, on_sample, s,
				    decode_again, s, &s->stats, &s->stitch);
	else
		err = cs_stitch_new(!s->opts.no_merge, form, sample, sample_ctx,
				    decode_again, s, &s->stats, &s->stitch);
	if (!err && !s->opts.ordered_off)
		err = cs_order_new(s->opts.read_ahead ? deliver_or_send : deliver,
				   s, &s->order);
	if (err)
		return cs_error(&s->eb, err, "%s: %s", s->path, strerror(-err));
	return 0;
}

/* The end of the input: the check of the counts, the last progress, and
 * what to warn about. Returns 0 or -EPROTO. */
static int finish(struct cs_session *s)
{
	const char *damage = cs_reader_warning(s->reader);

	/* every sample and record was counted once: a bug here must not
	 * pass as a profile */
	if (cs_stats_mismatch(&s->stats))
		return cs_error(&s->eb, -EPROTO, "%s: internal error: %s",
				s->path, cs_stats_mismatch(&s->stats));
	progress(s, s->pos, true);
	if (s->stats.unwind_refused)
		warn(s, "%s: %" PRIu64 " sample%s not unwound, the first at "
		     "offset %#" PRIx64 ": %s", s->path, s->stats.unwind_refused,
		     s->stats.unwind_refused == 1 ? " was" : "s were",
		     s->refused_offset, s->refused_why);
	if (cs_reader_truncated(s->reader))
		warn(s, "%s: the recording was cut short (its header gives no "
		     "data size); read up to the last whole record", s->path);
	if (damage)
		warn(s, "%s", damage);
	return 0;
}

int cs_session_run(struct cs_session *s, const struct cs_output_ops *ops,
		   void *ctx)
{
	int err;

	err = start(s, ops, ctx, ops && ops->sample ? ops->sample : no_sample,
		    ctx);
	if (err)
		return err;
	if (s->ops->begin) {
		err = s->ops->begin(s->ctx, s);
		if (err)
			return err;
	}
	err = read_all(s);
	if (err == -ENOMEM)
		cs_error(&s->eb, err, "%s: out of memory", s->path);
	if (err)
		return err;
	err = finish(s);
	if (err)
		return err;
	if (s->ops->end)
		return s->ops->end(s->ctx, s);
	return 0;
}

/* ---- pull ---- */

static int pull_reserve(struct pull_queue *q, size_t more)
{
	size_t cap = q->cap ? q->cap : 64 * 1024;
	unsigned char *p;

	if (q->cap - q->tail >= more)
		return 0;
	while (cap - q->tail < more) {
		if (cap > SIZE_MAX / 2)
			return -ENOMEM;
		cap *= 2;
	}
	p = realloc(q->buf, cap);
	if (!p)
		return -ENOMEM;
	q->buf = p;
	q->cap = cap;
	return 0;
}

#define PULL_ALIGN(n)	(((n) + 7) & ~(size_t)7)

/* The stitcher's callback when pulled: keeps a copy of the sample, its
 * chain (the two parts joined) and its record. The record is decoded again
 * when the sample is pulled, so that every array of the event points into
 * the copy. */
static int pull_keep(void *ctx, const struct cs_stitched *st)
{
	struct cs_session *s = ctx;
	struct pull_queue *q = &s->pull;
	size_t chain = cs_parts_nr(st) * sizeof(uint64_t);
	size_t need = PULL_ALIGN(sizeof(struct pulled)) + PULL_ALIGN(chain) +
		      PULL_ALIGN(st->event->size);
	struct pulled *p;
	unsigned char *data;

	if (pull_reserve(q, need))
		return -ENOMEM;
	p = (struct pulled *)(q->buf + q->tail);
	data = q->buf + q->tail + PULL_ALIGN(sizeof(*p));
	p->st = *st;
	p->st.chain_nr = cs_parts_join(st, (uint64_t *)(void *)data);
	p->st.user = NULL;
	p->st.user_nr = 0;
	p->offset = st->event->offset;
	p->size = st->event->size;
	memcpy(data + PULL_ALIGN(chain), st->event->bytes, st->event->size);
	q->tail += need;
	p->next = q->tail;
	return 0;
}

int cs_session_next(struct cs_session *s, const struct cs_stitched **out)
{
	struct pull_queue *q = &s->pull;
	const unsigned char *data;
	struct pulled *p;
	int err;

	*out = NULL;
	if (!s->pulled) {
		/* pull_keep() joins a chain's parts as it copies them, and
		 * puts the user marker back */
		s->opts.chain_parts = true;
		s->opts.user_marker_implied = true;
		err = start(s, NULL, NULL, pull_keep, s);
		if (err)
			return err;
		s->pulled = true;
	}
	if (q->head == q->tail) {
		/* the sample returned last is given up: refill from the start */
		q->head = q->tail = 0;
		if (q->ended)
			return 0;
		err = read_all(s);
		if (err == -ENOMEM)
			cs_error(&s->eb, err, "%s: out of memory", s->path);
		if (err && err != CS_ORDER_PAUSE)
			return err;
		if (!err) {
			/* everything is read; what the stitcher released last
			 * is still queued */
			q->ended = true;
			err = finish(s);
			if (err)
				return err;
		}
		if (q->head == q->tail)
			return 0;
	}
	p = (struct pulled *)(q->buf + q->head);
	data = q->buf + q->head + PULL_ALIGN(sizeof(*p));
	err = cs_decode(s->evlist, data + PULL_ALIGN(p->st.chain_nr * 8), p->size,
			p->offset, s->path, &q->ev, &s->eb);
	if (err)
		return err;
	q->st = p->st;
	q->st.event = &q->ev;
	q->st.chain = (const uint64_t *)data;
	q->head = p->next;
	*out = &q->st;
	return 1;
}

/* ---- accessors ---- */

const char *cs_session_error(const struct cs_session *s)
{
	return s ? s->eb.msg : "out of memory";
}

const char *cs_session_warning(const struct cs_session *s)
{
	return s && s->warning.msg[0] ? s->warning.msg : NULL;
}

const struct cs_stats *cs_session_stats(const struct cs_session *s)
{
	return &s->stats;
}

bool cs_session_waiting_since(struct cs_session *s, uint32_t tid, uint64_t *time)
{
	return s->stitch && cs_stitch_waiting_since(s->stitch, tid, time);
}

const struct cs_completeness *cs_session_completeness(struct cs_session *s)
{
	return s->complete ? cs_complete_get(s->complete) : NULL;
}

struct cs_machine *cs_session_machine(struct cs_session *s)
{
	return s->machine;
}

const struct cs_evsel *cs_session_evsel(const struct cs_session *s, size_t i)
{
	return s->evlist ? cs_evlist_get(s->evlist, i) : NULL;
}

size_t cs_session_nr_evsels(const struct cs_session *s)
{
	return s->evlist ? cs_evlist_count(s->evlist) : 0;
}

const struct cs_file_info *cs_session_info(const struct cs_session *s)
{
	return s->reader ? cs_reader_info(s->reader) : NULL;
}

void cs_session_interrupt(struct cs_session *s)
{
	atomic_store(&s->interrupted, true);
	if (s->wake_fd >= 0)
		eventfd_write(s->wake_fd, 1);
}

void cs_session_free(struct cs_session *s)
{
	if (!s)
		return;
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	cs_order_free(s->order);
	cs_stitch_free(s->stitch);
	free(s->pull.buf);
	cs_complete_free(s->complete);
	cs_unwind_free(s->unwind);
	free(s->chain);
	cs_machine_free(s->machine);
	cs_unpack_remove(s->archive_dir);
	cs_offcpu_free(s->offcpu);
	cs_tracepoints_free(s->tracepoints);
	cs_reader_free(s->reader);
	free(s);
}

struct cs_tracepoints *cs_session_tracepoints(struct cs_session *s)
{
	const void *data;
	const char *why;
	size_t size;
	int err;

	if (s->tracepoints || s->tracepoints_failed || !s->reader)
		return s->tracepoints;
	/* a pipe's tracing data arrives as a record: not yet is not never */
	if (cs_reader_feature(s->reader, CS_FEAT_TRACING_DATA, &data, &size))
		return NULL;
	err = cs_tracepoints_new(data, size, &s->tracepoints, &why);
	if (err) {
		s->tracepoints_failed = true;
		cs_error(&s->warning, 0, "%s: the tracing data %s (%s): tracepoint "
			 "fields are not shown", s->path, err == -ENOMEM ?
			 "cannot be read" : "is damaged", why);
	}
	return s->tracepoints;
}

void cs_session_on_change(struct cs_session *s, cs_change_fn fn, void *ctx)
{
	s->on_change = fn;
	s->change_ctx = ctx;
}
