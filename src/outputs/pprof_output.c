/* pprof_output.c - the pprof profile as a cs_output_ops (see pprof.h).
 *
 * Kept apart from pprof.c so that the encoding can be tested with
 * hand-made frames, without a session.
 */
#include <errno.h>
#include <stdlib.h>

#include "abi/perf_abi.h"
#include "outputs/out_names.h"
#include "outputs/pprof.h"

static int run_begin(void *ctx, struct cs_session *s)
{
	struct cs_pprof_run *run = ctx;

	run->machine = cs_session_machine(s);
	run->frames = malloc(CS_FRAMES_MAX * sizeof(*run->frames));
	if (!run->frames)
		return -ENOMEM;
	if (!run->inline_lines)
		return 0;
	run->expanded = malloc(CS_FRAMES_MAX * sizeof(*run->expanded));
	run->inlined = malloc(CS_FRAMES_MAX);
	run->inline_cache = calloc(1, sizeof(*run->inline_cache));
	return run->expanded && run->inlined && run->inline_cache ? 0 : -ENOMEM;
}

static int run_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_pprof_run *run = ctx;
	const struct cs_sample *smp = &s->event->sample;
	unsigned int evsel = s->event->evsel ? s->event->evsel->index : 0;
	char tidname[16];
	size_t n;

	if (!cs_view_takes(run->view, s->off_cpu != CS_OFF_CPU_NONE) ||
	    (run->pids && !cs_id_list_has(run->pids, smp->pid)) ||
	    (run->tids && !cs_id_list_has(run->tids, smp->tid)))
		return 0;
	n = cs_frames_resolve(run->machine, s, run->frames, CS_FRAMES_MAX);
	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	if (run->inline_lines) {
		n = cs_out_expand_inlines_cached(run->machine, smp->pid,
						 run->frames, n, run->expanded,
						 run->inlined, CS_FRAMES_MAX,
						 run->inline_cache);
		return cs_pprof_add_off_cpu(run->pprof, evsel, s->off_cpu, smp->pid,
					    smp->tid, cs_out_comm(run->machine, smp->pid,
								  smp->tid, tidname),
					    smp->time, run->expanded, run->inlined,
					    n, smp->period);
	}
	return cs_pprof_add_off_cpu(run->pprof, evsel, s->off_cpu, smp->pid,
				    smp->tid, cs_out_comm(run->machine, smp->pid,
							  smp->tid, tidname),
				    smp->time, run->frames, NULL, n, smp->period);
}

static int run_end(void *ctx, struct cs_session *s)
{
	struct cs_pprof_run *run = ctx;
	size_t nr = cs_session_nr_evsels(s), max = 0;
	struct cs_pprof_event *ev;
	int err;

	for (size_t i = 0; i < nr; i++)
		if (cs_session_evsel(s, i)->index + 1 > max)
			max = cs_session_evsel(s, i)->index + 1;
	ev = calloc(max ? max : 1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct cs_evsel *e = cs_session_evsel(s, i);
		struct cs_pprof_event *d = &ev[e->index];

		d->name = e->name;
		if (e->freq)
			d->freq = e->sample_period;
		else
			d->period = e->sample_period;
	}
	errno = 0;
	err = cs_pprof_write(run->pprof, ev, max, run->out);
	free(ev);
	if (err == -EIO) {
		run->write_err = errno ? errno : EIO;
		return 1;
	}
	return err;
}

void cs_pprof_run_release(struct cs_pprof_run *run)
{
	free(run->frames);
	free(run->expanded);
	free(run->inlined);
	free(run->inline_cache);
	run->frames = run->expanded = NULL;
	run->inlined = NULL;
	run->inline_cache = NULL;
}

const struct cs_output_ops cs_pprof_ops = {
	.begin = run_begin,
	.sample = run_sample,
	.end = run_end,
};
