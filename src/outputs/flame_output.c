/* flame_output.c - stitched samples into the flame tree.
 *
 * Samples are counted per unique stack with the outputs' shared
 * aggregator (stack_agg.h): "event; process; outermost ... innermost".
 * Only at the end does each unique stack enter the prefix tree the page
 * draws, so the tree's work grows with the unique stacks, not the samples.
 * Frames are named like the folded output names them (an unknown symbol
 * as its dso's base name in brackets, the missing-user marker by
 * cs_out_missing_user_name(), a thread never named as ":TID", inlined
 * functions as frames of their own), so the two views of a profile agree.
 */
#include "outputs/flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "outputs/out_inlines.h"
#include "outputs/out_names.h"
#include "lib/machine/frames.h"
#include "lib/util/handoff.h"
#include "outputs/stack_agg.h"

/* cs_agg_key.flags: the cs_flame_kind in the low bits, what else tells
 * frames apart above it */
#define KEY_KIND_MASK	0x0fu
#define KEY_EVENT	0x10u
#define KEY_COMM	0x20u
#define KEY_COOKIE	0x40u
#define KEY_INLINED	0x80u		/* a function inlined at the address */
#define KEY_OFF_CPU	0x100u		/* off-CPU leaf; state above KEY_WHY_SHIFT */
#define KEY_WHY_SHIFT	12		/* the missing reason of a marker */

/* A sample's keys: its event, its comm, its frames and an off-CPU leaf */
#define KEYS_MAX	(CS_FRAMES_MAX + 3)

struct cs_flame_output {
	struct cs_flame *tree;
	struct cs_agg *agg;
	bool no_kernel, no_inline, off_cpu;
	bool base;			/* these samples are a diff's baseline */
	unsigned int jobs;
	struct cs_handoff *handoff;	/* to the counting thread, which owns
					 * agg until flame_flush() */
	bool no_handoff;		/* none could be had: count here */
	uint64_t left_out;
	struct cs_machine *machine;
	struct cs_frame *frames;	/* CS_FRAMES_MAX, reused by every sample */
	struct cs_frame *expanded;	/* CS_FRAMES_MAX: frames + inlined ones */
	uint8_t *inlined;		/* CS_FRAMES_MAX: enum cs_out_inline */
	struct cs_agg_key *keys;	/* KEYS_MAX, the reading side's */
	uint32_t *stack;		/* KEYS_MAX, the counting side's */
	char *event_names;
};

static bool is_kernel_mode(uint8_t cpumode)
{
	return cpumode == CS_MISC_KERNEL || cpumode == CS_MISC_GUEST_KERNEL ||
	       cpumode == CS_MISC_HYPERVISOR;
}

static int flame_begin(void *ctx, struct cs_session *s)
{
	struct cs_flame_output *fo = ctx;

	fo->machine = cs_session_machine(s);
	return 0;
}

/* The key of a frame into *key; false to leave the frame out */
static bool frame_key(const struct cs_flame_output *fo, const struct cs_frame *fr,
		      bool inlined, struct cs_agg_key *key)
{
	if (fr->kind == CS_FRAME_MISSING_USER) {
		*key = (struct cs_agg_key){
			.flags = CS_FLAME_MISSING | (uint32_t)fr->missing << KEY_WHY_SHIFT,
		};
	} else if (fr->kind == CS_FRAME_COOKIE) {
		*key = (struct cs_agg_key){ .flags = CS_FLAME_MISSING | KEY_COOKIE };
	} else if (is_kernel_mode(fr->cpumode)) {
		if (fo->no_kernel)
			return false;
		*key = (struct cs_agg_key){ fr->loc.sym, fr->loc.dso_name, 0,
					    CS_FLAME_KERNEL };
	} else {
		*key = (struct cs_agg_key){ fr->loc.sym, fr->loc.dso_name, 0,
					    CS_FLAME_USER | (inlined ? KEY_INLINED : 0) };
	}
	return true;
}

/* A sample's keys into keys[] (room for KEYS_MAX), root first: its event,
 * its comm (a key without its name: the caller keeps that), its frames,
 * an off-CPU leaf. Returns how many. */
static uint32_t sample_keys(struct cs_flame_output *fo, const struct cs_stitched *st,
			    struct cs_agg_key *keys)
{
	const struct cs_sample *smp = &st->event->sample;
	const struct cs_evsel *ev = st->event->evsel;
	size_t n = cs_frames_resolve(fo->machine, st, fo->frames, CS_FRAMES_MAX);
	const struct cs_frame *frames = fo->frames;
	uint32_t nr = 0;

	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;	/* cannot happen: a record holds fewer */
	if (!fo->no_inline) {
		/* functions inlined at user addresses as frames of their own,
		 * as perf, script and folded show them */
		n = cs_out_expand_inlines(fo->machine, smp->pid, fo->frames, n,
					  fo->expanded, fo->inlined, CS_FRAMES_MAX);
		frames = fo->expanded;
	} else {
		memset(fo->inlined, CS_OUT_NOT_INLINED, n);
	}
	keys[nr++] = (struct cs_agg_key){
		.sym = ev && ev->name ? ev->name : "[unknown event]",
		.flags = CS_FLAME_OTHER | KEY_EVENT,
	};
	keys[nr++] = (struct cs_agg_key){ .flags = CS_FLAME_OTHER | KEY_COMM };
	/* frames come innermost first; the tree wants the root first */
	for (size_t i = n; i-- > 0;)
		if (frame_key(fo, &frames[i], fo->inlined[i] != CS_OUT_NOT_INLINED,
			      &keys[nr]))
			nr++;
	if (st->off_cpu != CS_OFF_CPU_NONE)
		/* why it waited, above the scheduler */
		keys[nr++] = (struct cs_agg_key){
			.flags = CS_FLAME_OTHER | KEY_OFF_CPU |
				 (uint32_t)st->off_cpu << KEY_WHY_SHIFT,
		};
	return nr;
}

/* Counts a sample's keys (from sample_keys(), comm its command's name) in
 * the table: on the counting thread, if there is one. The event and comm
 * names are copied: the table outlives a diff's first session. */
static int count_keys(struct cs_flame_output *fo, const struct cs_agg_key *keys,
		      uint32_t nr, const char *comm, uint64_t period)
{
	struct cs_agg_key named = keys[1];
	uint32_t *ids = fo->stack;
	int err;

	named.sym = comm;
	err = cs_agg_frame_copy(fo->agg, &keys[0], &ids[0]);
	if (!err)
		err = cs_agg_frame_copy(fo->agg, &named, &ids[1]);
	if (!err)
		err = cs_agg_frames(fo->agg, keys + 2, nr - 2, ids + 2);
	if (err)
		return err;
	/* the table shares nodes from the last frame: the root goes last */
	for (uint32_t i = 0; i < nr / 2; i++) {
		uint32_t t = ids[i];

		ids[i] = ids[nr - 1 - i];
		ids[nr - 1 - i] = t;
	}
	return cs_agg_add(fo->agg, 0, ids, nr, 1, period, NULL);
}

/* The counting thread: the samples of a batch, in order. */
static int count_rec(void *ctx, const struct cs_agg_key *keys, uint32_t nr,
		     const char *comm, uint64_t period)
{
	return count_keys(ctx, keys, nr, comm, period);
}

static int count_batch(void *ctx, const void *buf, size_t len)
{
	return cs_agg_rec_walk(buf, len, count_rec, ctx);
}

/* Ends the counting thread: the table is this thread's again. */
static int flame_flush(struct cs_flame_output *fo)
{
	int err = cs_handoff_finish(fo->handoff);

	fo->handoff = NULL;
	return err;
}

static int flame_sample(void *ctx, const struct cs_stitched *st)
{
	struct cs_flame_output *fo = ctx;
	const struct cs_sample *smp = &st->event->sample;
	char tidname[16];
	const char *comm;
	struct cs_agg_rec *rec;
	uint32_t nr;

	if ((st->off_cpu != CS_OFF_CPU_NONE) != fo->off_cpu) {
		fo->left_out++;
		return 0;
	}
	comm = cs_out_comm(fo->machine, smp->pid, smp->tid, tidname);
	/* with jobs to spare, the table is filled on a thread of its own
	 * while this one reads and resolves the next samples */
	if (fo->jobs > 1 && !fo->handoff && !fo->no_handoff)
		fo->no_handoff = cs_handoff_new(count_batch, fo, &fo->handoff) != 0;
	nr = sample_keys(fo, st, fo->keys);
	if (!fo->handoff)
		return count_keys(fo, fo->keys, nr, comm, smp->period);
	/* inlined functions make the count known only now: the keys are
	 * copied into the batch, with the comm */
	rec = cs_agg_rec_append(fo->handoff, nr, comm, strlen(comm));
	if (!rec)
		return -ENOMEM;
	memcpy(cs_agg_rec_room(rec), fo->keys, nr * sizeof(*fo->keys));
	rec->nr = nr;
	rec->period = smp->period;
	return cs_handoff_error(fo->handoff);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static long tree_frame(struct cs_flame_output *fo, const struct cs_agg_key *k)
{
	enum cs_flame_kind kind = (enum cs_flame_kind)(k->flags & KEY_KIND_MASK);
	char name[512];

	if (k->flags & KEY_OFF_CPU)
		return cs_flame_frame(fo->tree, cs_out_off_cpu_name((enum cs_off_cpu_state)
					(k->flags >> KEY_WHY_SHIFT)), NULL, kind);
	if (kind == CS_FLAME_MISSING)
		return cs_flame_frame(fo->tree, k->flags & KEY_COOKIE ?
				      "[deferred user stack: cookie]" :
				      cs_out_missing_user_name((enum cs_missing_reason)
							       (k->flags >> KEY_WHY_SHIFT)),
				      NULL, kind);
	if (k->flags & (KEY_EVENT | KEY_COMM))
		return cs_flame_frame(fo->tree, k->sym ? k->sym : "[unknown]", NULL, kind);
	if (k->sym && (k->flags & KEY_INLINED)) {
		/* the hover says where it was inlined */
		snprintf(name, sizeof(name), "inlined in %s", k->dso ? k->dso : "[unknown]");
		return cs_flame_frame(fo->tree, k->sym, name, kind);
	}
	if (k->sym)
		return cs_flame_frame(fo->tree, k->sym, k->dso, kind);
	if (!k->dso)
		return cs_flame_frame(fo->tree, "[unknown]", NULL, kind);
	/* "[libc.so.6]": the unknown frames of one library merge; bracketed
	 * even when the name has brackets ("[[vdso]]"), as stackcollapse-perf
	 * and the folded output do, so the two views stay the same */
	snprintf(name, sizeof(name), "[%s]", base_name(k->dso));
	return cs_flame_frame(fo->tree, name, k->dso, kind);
}

/* Every unique stack into the tree, its frames renamed once each. */
static int flame_end(void *ctx, struct cs_session *s)
{
	struct cs_flame_output *fo = ctx;
	int err = flame_flush(fo);
	size_t nf = cs_agg_nr_frames(fo->agg), ns = cs_agg_nr_stacks(fo->agg);
	long *map = malloc((nf ? nf : 1) * sizeof(*map));
	uint32_t *frames = malloc((cs_agg_max_depth(fo->agg) + 1) * sizeof(*frames));

	(void)s;
	if (err || !map || !frames) {
		free(map);
		free(frames);
		return err ? err : -ENOMEM;
	}
	for (size_t i = 0; i < nf && !err; i++) {
		map[i] = tree_frame(fo, cs_agg_frame_key(fo->agg, (uint32_t)i));
		if (map[i] < 0)
			err = (int)map[i];
	}
	for (size_t i = 0; i < ns && !err; i++) {
		struct cs_agg_stack st;
		uint64_t v;

		cs_agg_stack(fo->agg, (uint32_t)i, frames, &st);
		for (uint32_t k = 0; k < st.nr; k++)
			fo->stack[k] = (uint32_t)map[st.frames[st.nr - 1 - k]];
		/* off-CPU: the tree's values are nanoseconds */
		v = fo->off_cpu ? st.period : st.count;
		err = fo->base ? cs_flame_add_base(fo->tree, fo->stack, st.nr, v) :
				 cs_flame_add(fo->tree, fo->stack, st.nr, v);
	}
	free(map);
	free(frames);
	return err;
}

const struct cs_output_ops cs_flame_output_ops = {
	.begin = flame_begin,
	.sample = flame_sample,
	.end = flame_end,
};

int cs_flame_output_new(const struct cs_flame_output_opts *o,
			struct cs_flame_output **out)
{
	struct cs_flame_output *fo = calloc(1, sizeof(*fo));

	*out = NULL;
	if (!fo)
		return -ENOMEM;
	fo->no_kernel = o && o->no_kernel;
	fo->no_inline = o && o->no_inline;
	fo->off_cpu = o && o->off_cpu;
	fo->jobs = o ? o->jobs : 1;
	fo->frames = calloc(CS_FRAMES_MAX, sizeof(*fo->frames));
	fo->expanded = calloc(CS_FRAMES_MAX, sizeof(*fo->expanded));
	fo->inlined = calloc(CS_FRAMES_MAX, 1);
	fo->keys = calloc(KEYS_MAX, sizeof(*fo->keys));
	fo->stack = calloc(KEYS_MAX, sizeof(*fo->stack));
	if (!fo->frames || !fo->expanded || !fo->inlined || !fo->keys || !fo->stack ||
	    cs_flame_new(&fo->tree) ||
	    cs_agg_new(&fo->agg)) {
		cs_flame_output_free(fo);
		return -ENOMEM;
	}
	*out = fo;
	return 0;
}

struct cs_flame *cs_flame_output_tree(struct cs_flame_output *fo)
{
	return fo->tree;
}

const char *cs_flame_output_events(struct cs_flame_output *fo)
{
	size_t nf = cs_agg_nr_frames(fo->agg), len = 1, used = 0;

	if (fo->event_names)
		return fo->event_names;
	for (size_t i = 0; i < nf; i++) {
		const struct cs_agg_key *k = cs_agg_frame_key(fo->agg, (uint32_t)i);

		if (k->flags & KEY_EVENT)
			len += strlen(k->sym) + 2;
	}
	fo->event_names = malloc(len);
	if (!fo->event_names)
		return NULL;
	fo->event_names[0] = '\0';
	for (size_t i = 0; i < nf; i++) {
		const struct cs_agg_key *k = cs_agg_frame_key(fo->agg, (uint32_t)i);

		if (k->flags & KEY_EVENT)
			used += (size_t)snprintf(fo->event_names + used, len - used,
						 "%s%s", used ? ", " : "", k->sym);
	}
	return fo->event_names;
}

int cs_flame_output_start_base(struct cs_flame_output *fo)
{
	struct cs_agg *agg;

	/* the new profile's stacks are in the tree: the table starts over,
	 * once it has said which events they were */
	if (flame_flush(fo) || !cs_flame_output_events(fo) || cs_agg_new(&agg))
		return -ENOMEM;
	cs_agg_free(fo->agg);
	fo->agg = agg;
	fo->left_out = 0;
	fo->base = true;
	return 0;
}

uint64_t cs_flame_output_left_out(const struct cs_flame_output *fo)
{
	return fo->left_out;
}

void cs_flame_output_free(struct cs_flame_output *fo)
{
	if (!fo)
		return;
	flame_flush(fo);	/* a run that stopped early: the thread ends */
	cs_flame_free(fo->tree);
	cs_agg_free(fo->agg);
	free(fo->frames);
	free(fo->expanded);
	free(fo->inlined);
	free(fo->keys);
	free(fo->stack);
	free(fo->event_names);
	free(fo);
}
