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

struct cs_flame_output {
	struct cs_flame *tree;
	struct cs_agg *agg;
	bool no_kernel, no_inline, off_cpu;
	bool base;			/* these samples are a diff's baseline */
	uint64_t left_out;
	struct cs_machine *machine;
	struct cs_frame *frames;	/* CS_FRAMES_MAX, reused by every sample */
	struct cs_frame *expanded;	/* CS_FRAMES_MAX: frames + inlined ones */
	uint8_t *inlined;		/* CS_FRAMES_MAX: enum cs_out_inline */
	uint32_t *stack;		/* CS_FRAMES_MAX + 2 */
	char *event_names;
};

static bool is_kernel_mode(uint8_t cpumode)
{
	return cpumode == CS_MISC_KERNEL || cpumode == CS_MISC_GUEST_KERNEL ||
	       cpumode == CS_MISC_HYPERVISOR;
}

static int push(struct cs_flame_output *fo, size_t *depth,
		const struct cs_agg_key *key, bool copy)
{
	uint32_t id;
	int err = copy ? cs_agg_frame_copy(fo->agg, key, &id) :
			 cs_agg_frame(fo->agg, key, NULL, &id);

	if (err)
		return err;
	fo->stack[(*depth)++] = id;
	return 0;
}

static int flame_begin(void *ctx, struct cs_session *s)
{
	struct cs_flame_output *fo = ctx;

	fo->machine = cs_session_machine(s);
	return 0;
}

static int flame_sample(void *ctx, const struct cs_stitched *st)
{
	struct cs_flame_output *fo = ctx;
	const struct cs_sample *smp = &st->event->sample;
	const struct cs_evsel *ev = st->event->evsel;
	size_t n = cs_frames_resolve(fo->machine, st, fo->frames, CS_FRAMES_MAX);
	const struct cs_frame *frames = fo->frames;
	size_t depth = 0;
	char tidname[16];
	struct cs_agg_key key = {
		.sym = ev && ev->name ? ev->name : "[unknown event]",
		.flags = CS_FLAME_OTHER | KEY_EVENT,
	};
	int err;

	if ((st->off_cpu != CS_OFF_CPU_NONE) != fo->off_cpu) {
		fo->left_out++;
		return 0;
	}
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
	err = push(fo, &depth, &key, true);
	if (err)
		return err;
	key = (struct cs_agg_key){
		.sym = cs_out_comm(fo->machine, smp->pid, smp->tid, tidname),
		.flags = CS_FLAME_OTHER | KEY_COMM,
	};
	err = push(fo, &depth, &key, true);
	if (err)
		return err;
	/* frames come innermost first; the tree wants the root first */
	for (size_t i = n; i-- > 0;) {
		const struct cs_frame *fr = &frames[i];
		uint32_t inl = fo->inlined[i] != CS_OUT_NOT_INLINED ? KEY_INLINED : 0;

		if (fr->kind == CS_FRAME_MISSING_USER) {
			key = (struct cs_agg_key){
				.flags = CS_FLAME_MISSING |
					 (uint32_t)fr->missing << KEY_WHY_SHIFT,
			};
		} else if (fr->kind == CS_FRAME_COOKIE) {
			key = (struct cs_agg_key){ .flags = CS_FLAME_MISSING | KEY_COOKIE };
		} else if (is_kernel_mode(fr->cpumode)) {
			if (fo->no_kernel)
				continue;
			key = (struct cs_agg_key){ fr->loc.sym, fr->loc.dso_name, 0,
						   CS_FLAME_KERNEL };
		} else {
			key = (struct cs_agg_key){ fr->loc.sym, fr->loc.dso_name, 0,
						   CS_FLAME_USER | inl };
		}
		err = push(fo, &depth, &key, false);
		if (err)
			return err;
	}
	if (st->off_cpu != CS_OFF_CPU_NONE) {
		/* why it waited, above the scheduler */
		key = (struct cs_agg_key){
			.flags = CS_FLAME_OTHER | KEY_OFF_CPU |
				 (uint32_t)st->off_cpu << KEY_WHY_SHIFT,
		};
		err = push(fo, &depth, &key, false);
		if (err)
			return err;
	}
	/* the table shares nodes from the last frame: the root goes last */
	for (size_t i = 0; i < depth / 2; i++) {
		uint32_t t = fo->stack[i];

		fo->stack[i] = fo->stack[depth - 1 - i];
		fo->stack[depth - 1 - i] = t;
	}
	return cs_agg_add(fo->agg, 0, fo->stack, (uint32_t)depth, 1, smp->period, NULL);
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
	size_t nf = cs_agg_nr_frames(fo->agg), ns = cs_agg_nr_stacks(fo->agg);
	long *map = malloc((nf ? nf : 1) * sizeof(*map));
	uint32_t *frames = malloc((cs_agg_max_depth(fo->agg) + 1) * sizeof(*frames));
	int err = 0;

	(void)s;
	if (!map || !frames) {
		free(map);
		free(frames);
		return -ENOMEM;
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
	fo->frames = calloc(CS_FRAMES_MAX, sizeof(*fo->frames));
	fo->expanded = calloc(CS_FRAMES_MAX, sizeof(*fo->expanded));
	fo->inlined = calloc(CS_FRAMES_MAX, 1);
	fo->stack = calloc(CS_FRAMES_MAX + 2, sizeof(*fo->stack));
	if (!fo->frames || !fo->expanded || !fo->inlined || !fo->stack ||
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
	if (!cs_flame_output_events(fo) || cs_agg_new(&agg))
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
	cs_flame_free(fo->tree);
	cs_agg_free(fo->agg);
	free(fo->frames);
	free(fo->expanded);
	free(fo->inlined);
	free(fo->stack);
	free(fo->event_names);
	free(fo);
}
