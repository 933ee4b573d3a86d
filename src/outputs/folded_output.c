/* folded_output.c - folded stacks as a cs_output_ops (see folded.h).
 *
 * Kept apart from folded.c so that the aggregation can be tested with
 * hand-made frames, without a session.
 */
#include <errno.h>

#include "outputs/folded.h"
#include "outputs/out_inlines.h"
#include "outputs/out_names.h"

static int run_begin(void *ctx, struct cs_session *s)
{
	struct cs_folded_run *r = ctx;

	r->machine = cs_session_machine(s);
	return cs_out_stack_init(&r->stack);
}

static int run_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_folded_run *r = ctx;
	struct cs_folded *f = r->folded;
	const struct cs_sample *smp = &s->event->sample;
	const struct cs_frame *frames;
	char tidname[16];
	size_t n;

	if (!cs_view_takes(r->view, s->off_cpu != CS_OFF_CPU_NONE)) {
		r->left_out++;
		return 0;
	}
	if (!cs_folded_wants(f, smp->pid, smp->tid))
		return 0;
	n = cs_out_stack_resolve(&r->stack, r->machine, s, !r->no_inline, &frames);
	return cs_folded_add_off_cpu(f, frames, n, cs_folded_wants_comm(f) ?
				     cs_out_comm(r->machine, smp->pid, smp->tid,
						 tidname) : NULL, smp->period,
				     s->off_cpu);
}

static int run_end(void *ctx, struct cs_session *s)
{
	struct cs_folded_run *r = ctx;

	(void)s;
	int err;

	errno = 0;
	err = cs_folded_write(r->folded, r->out);
	if (err == -EIO) {
		r->write_err = errno ? errno : EIO;
		return 1;
	}
	return err;
}

void cs_folded_run_release(struct cs_folded_run *r)
{
	cs_out_stack_release(&r->stack);
}

const struct cs_output_ops cs_folded_ops = {
	.begin = run_begin,
	.sample = run_sample,
	.end = run_end,
};
