/* speedscope_output.c - the speedscope file as a cs_output_ops (see
 * speedscope.h).
 *
 * Kept apart from speedscope.c so that the file can be tested with
 * hand-made frames, without a session.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "outputs/out_names.h"
#include "outputs/speedscope.h"

static int run_begin(void *ctx, struct cs_session *s)
{
	struct cs_speedscope_run *r = ctx;

	r->machine = cs_session_machine(s);
	r->frames = malloc(CS_FRAMES_MAX * sizeof(*r->frames));
	r->expanded = malloc(CS_FRAMES_MAX * sizeof(*r->expanded));
	r->inlined = malloc(CS_FRAMES_MAX);
	r->inline_cache = calloc(1, sizeof(*r->inline_cache));
	return r->frames && r->expanded && r->inlined &&
	       r->inline_cache ? 0 : -ENOMEM;
}

static int run_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_speedscope_run *r = ctx;
	const struct cs_sample *smp = &s->event->sample;
	unsigned int evsel = s->event->evsel ? s->event->evsel->index : 0;
	const struct cs_frame *frames = r->frames;
	char tidname[16];
	size_t n;

	if ((r->pids && !cs_id_list_has(r->pids, smp->pid)) ||
	    (r->tids && !cs_id_list_has(r->tids, smp->tid)))
		return 0;
	n = cs_frames_resolve(r->machine, s, r->frames, CS_FRAMES_MAX);
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	if (!r->no_inline) {
		n = cs_out_expand_inlines_cached(r->machine, smp->pid, r->frames,
						 n, r->expanded, r->inlined,
						 CS_FRAMES_MAX, r->inline_cache);
		frames = r->expanded;
	}
	return cs_speedscope_add(r->speedscope, evsel, smp->tid,
				 cs_out_comm(r->machine, smp->pid, smp->tid, tidname),
				 frames, n, smp->period);
}

/* A clock event's period is nanoseconds of CPU time. */
static bool is_clock(const struct cs_evsel *e)
{
	return e->type == CS_PERF_TYPE_SOFTWARE &&
	       (e->config == CS_PERF_COUNT_SW_CPU_CLOCK ||
		e->config == CS_PERF_COUNT_SW_TASK_CLOCK);
}

static int run_end(void *ctx, struct cs_session *s)
{
	struct cs_speedscope_run *r = ctx;
	size_t nr = cs_session_nr_evsels(s), max = 0;
	struct cs_speedscope_event *ev;
	int err;

	for (size_t i = 0; i < nr; i++)
		if (cs_session_evsel(s, i)->index + 1 > max)
			max = cs_session_evsel(s, i)->index + 1;
	ev = calloc(max ? max : 1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct cs_evsel *e = cs_session_evsel(s, i);

		ev[e->index].name = e->name;
		ev[e->index].nanoseconds = is_clock(e);
	}
	errno = 0;
	err = cs_speedscope_write(r->speedscope, ev, max, r->name, r->exporter,
				  r->out);
	free(ev);
	if (err == -EIO) {
		r->write_err = errno ? errno : EIO;
		return 1;
	}
	return err;
}

void cs_speedscope_run_release(struct cs_speedscope_run *r)
{
	free(r->frames);
	free(r->expanded);
	free(r->inlined);
	free(r->inline_cache);
	r->frames = r->expanded = NULL;
	r->inlined = NULL;
	r->inline_cache = NULL;
}

const struct cs_output_ops cs_speedscope_ops = {
	.begin = run_begin,
	.sample = run_sample,
	.end = run_end,
};
