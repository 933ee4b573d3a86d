/* speedscope_output.c - the speedscope file as a cs_output_ops (see
 * speedscope.h).
 *
 * Kept apart from speedscope.c so that the file can be written from
 * hand-made frames, without a session.
 */
#include <errno.h>

#include "outputs/out_names.h"
#include "outputs/speedscope.h"

static int run_begin(void *ctx, struct cs_session *s)
{
	struct cs_speedscope_run *r = ctx;

	r->machine = cs_session_machine(s);
	return cs_out_stack_init(&r->stack);
}

static int run_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_speedscope_run *r = ctx;
	const struct cs_sample *smp = &s->event->sample;
	const struct cs_frame *frames;
	char tidname[16];
	size_t n;

	if ((r->pids && !cs_id_list_has(r->pids, smp->pid)) ||
	    (r->tids && !cs_id_list_has(r->tids, smp->tid)))
		return 0;
	n = cs_out_stack_resolve(&r->stack, r->machine, s, !r->no_inline, &frames);
	return cs_speedscope_add(r->speedscope, s->event->evsel, smp->tid,
				 cs_out_comm(r->machine, smp->pid, smp->tid, tidname),
				 frames, n, smp->period);
}

static int run_end(void *ctx, struct cs_session *s)
{
	struct cs_speedscope_run *r = ctx;
	int err;

	(void)s;
	errno = 0;
	err = cs_speedscope_write(r->speedscope, r->name, r->exporter, r->out);
	if (err == -EIO) {
		r->write_err = errno ? errno : EIO;
		return 1;
	}
	return err;
}

void cs_speedscope_run_release(struct cs_speedscope_run *r)
{
	cs_out_stack_release(&r->stack);
}

const struct cs_output_ops cs_speedscope_ops = {
	.begin = run_begin,
	.sample = run_sample,
	.end = run_end,
};
