/* report_output.c - the report as a cs_output_ops (see report.h): filters,
 * frame resolution, and the header with the recording's metadata.
 *
 * Kept apart from report.c so that the aggregation and the layout can be
 * tested with hand-made frames, without a session.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/machine/machine.h"
#include "outputs/out_inlines.h"
#include "outputs/out_names.h"
#include "outputs/report.h"
#include "outputs/stack_health.h"

static int run_begin(void *ctx, struct cs_session *s)
{
	struct cs_report_run *run = ctx;
	const struct cs_file_info *fi = cs_session_info(s);

	run->machine = cs_session_machine(s);
	/* a record's offset against the data section's size: in a
	 * compressed file, the compressed bytes read (a compressed record's
	 * records carry its offset) */
	if (fi && !fi->pipe_mode) {
		run->data_start = fi->data_offset;
		run->data_size = fi->data_size;
	}
	run->frames = malloc(CS_FRAMES_MAX * sizeof(*run->frames));
	run->spaces = malloc(CS_FRAMES_MAX * sizeof(*run->spaces));
	run->expanded = malloc(CS_FRAMES_MAX * sizeof(*run->expanded));
	run->inlined = malloc(CS_FRAMES_MAX);
	run->inline_cache = calloc(1, sizeof(*run->inline_cache));
	return run->frames && run->spaces && run->expanded && run->inlined &&
	       run->inline_cache ? 0 : -ENOMEM;
}

static void resolve_frame(void *ctx, uint32_t pid, struct cs_frame *f)
{
	struct cs_report_run *run = ctx;

	cs_frame_resolve(run->machine, pid, f);
}

/* The sample's frames as cs_frames_walk() gives them, each with the
 * address space it is resolved in. A corrupt chain shows no frames;
 * perf's report still files the sample under its own ip. */
static size_t walk_frames(struct cs_report_run *run, const struct cs_stitched *s)
{
	const struct cs_sample *smp = &s->event->sample;
	uint64_t uspace = cs_machine_user_space(run->machine, smp->pid);
	uint64_t kspace = cs_machine_kernel_space(run->machine);
	size_t n = cs_frames_walk(s, run->frames, CS_FRAMES_MAX);

	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	if (!n) {
		run->frames[0] = (struct cs_frame){
			.addr = smp->ip,
			.cpumode = smp->misc & CS_MISC_CPUMODE_MASK,
			.kind = CS_FRAME_ADDR,
		};
		n = 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct cs_frame *f = &run->frames[i];

		run->spaces[i] = f->kind != CS_FRAME_ADDR ? 0 :
				 cs_machine_is_kernel(f->cpumode, f->addr) ?
				 kspace : uspace;
	}
	return n;
}

/* An error with a temporary file stops the run as one the output explains
 * (the command prints cs_report_error()) */
static int said(const struct cs_report_run *run, int err)
{
	return err < 0 && cs_report_error(run->report) ? 1 : err;
}

static int run_sample(void *ctx, const struct cs_stitched *s)
{
	struct cs_report_run *run = ctx;
	const struct cs_sample *smp = &s->event->sample;
	char tidname[16];
	const char *comm = cs_out_comm(run->machine, smp->pid, smp->tid, tidname);
	unsigned int evsel = s->event->evsel ? s->event->evsel->index : 0;
	size_t n;

	if (!cs_view_takes(run->view, s->off_cpu != CS_OFF_CPU_NONE))
		return 0;
	if ((run->pids && !cs_id_list_has(run->pids, smp->pid)) ||
	    (run->tids && !cs_id_list_has(run->tids, smp->tid)) ||
	    (run->comms && !cs_name_list_has(run->comms, comm))) {
		run->filtered++;
		return 0;
	}
	n = walk_frames(run, s);
	cs_report_progress(run->report, s->event->offset > run->data_start ?
			   s->event->offset - run->data_start : 0, run->data_size);
	if (run->no_inline)
		return said(run, cs_report_add_walked(run->report, evsel, s->off_cpu,
					    smp->pid, smp->tid, comm, run->frames,
					    run->spaces, n, smp->period,
					    resolve_frame, run));
	for (size_t i = 0; i < n; i++)
		cs_frame_resolve(run->machine, smp->pid, &run->frames[i]);
	n = cs_out_expand_inlines_cached(run->machine, smp->pid, run->frames, n,
				  run->expanded, run->inlined, CS_FRAMES_MAX,
				  run->inline_cache);
	return said(run, cs_report_add_off_cpu(run->report, evsel, s->off_cpu,
				     smp->pid, smp->tid, comm, run->expanded,
				     run->inlined, n, smp->period));
}

static void header_str(FILE *out, const char *what, const char *v)
{
	if (v && *v)
		fprintf(out, "# %-15s: %s\n", what, v);
}

/* What perf's --header shows, and what only we know: how the user stacks
 * of the samples came together. */
static void write_header(struct cs_report_run *run, struct cs_session *s)
{
	const struct cs_file_info *fi = cs_session_info(s);
	const struct cs_stats *st = cs_session_stats(s);
	FILE *out = run->out;

	fputs("# ========\n# callstitch report\n", out);
	if (fi) {
		header_str(out, "hostname", fi->hostname);
		header_str(out, "os release", fi->os_release);
		header_str(out, "perf version", fi->perf_version);
		header_str(out, "arch", fi->arch);
		header_str(out, "cpudesc", fi->cpudesc);
		if (fi->nr_cpus_online)
			fprintf(out, "# %-15s: %" PRIu32 " online, %" PRIu32
				" available\n", "cpus", fi->nr_cpus_online,
				fi->nr_cpus_avail);
		if (fi->total_mem_kb)
			fprintf(out, "# %-15s: %" PRIu64 " kB\n", "total memory",
				fi->total_mem_kb);
		header_str(out, "cmdline", fi->cmdline);
	}
	for (size_t i = 0; i < cs_session_nr_evsels(s); i++) {
		const struct cs_evsel *ev = cs_session_evsel(s, i);

		fprintf(out, "# %-15s: %s, %" PRIu64 " samples\n", "event",
			ev->name ? ev->name : "?",
			cs_report_samples(run->report, ev->index));
	}
	fprintf(out, "# %-15s: %" PRIu64 ", of which %" PRIu64
		" with a deferred user stack\n", "samples", st->samples,
		st->samples_deferred);
	fprintf(out, "# %-15s: %" PRIu64 " stitched, %" PRIu64
		" stitched late, %" PRIu64 " kernel-only, %" PRIu64
		" as recorded\n", "user stacks", st->stitched,
		st->stitched_late, st->kernel_only, st->original);
	if (st->kernel_only) {
		fprintf(out, "# %-15s:", "kernel-only");
		for (int r = 1; r < CS_MISSING__COUNT; r++)
			if (st->kernel_only_by[r])
				fprintf(out, " %" PRIu64 " %s", st->kernel_only_by[r],
					cs_missing_reason_name((enum cs_missing_reason)r));
		fputc('\n', out);
	}
	fprintf(out, "# %-15s: %" PRIu64 " (%" PRIu64 " duplicate, %" PRIu64
		" orphan)\n", "deferred records", st->deferred_records,
		st->duplicate_records, st->orphan_records);
	if (st->unwound)
		fprintf(out, "# %-15s: %" PRIu64 " unwound from their stack "
			"copies (--call-graph dwarf)\n", "user stacks", st->unwound);
	cs_stack_health_write(out, cs_session_completeness(s),
			      "# completeness   : ", "#                    ", 5);
	if (st->off_cpu_samples) {
		fprintf(out, "# %-15s: %.6f s in %" PRIu64 " switch-outs", "off-CPU",
			st->off_cpu_ns / 1e9, st->off_cpu_samples);
		if (st->off_cpu_at_end)
			fprintf(out, ", %" PRIu64 " still waiting at the end",
				st->off_cpu_at_end);
		fputc('\n', out);
	}
	if (st->off_cpu_unknown)
		fprintf(out, "# %-15s: %" PRIu64 " switch-outs without a switch-in on "
			"record count 0 s (record with --switch-events, or -a)\n",
			"off-CPU unknown", st->off_cpu_unknown);
	if (run->filtered)
		fprintf(out, "# %-15s: %" PRIu64 " samples left out by --pid,"
			" --tid or --comm\n", "filtered", run->filtered);
	fputs("# ========\n#\n#\n", out);
	fprintf(out, "# Total Lost Samples: %" PRIu64 "\n",
		st->lost_samples);
}

static int run_end(void *ctx, struct cs_session *s)
{
	struct cs_report_run *run = ctx;
	size_t nr = cs_session_nr_evsels(s), max = 0;
	const char **names;
	int err;

	for (size_t i = 0; i < nr; i++) {
		const struct cs_evsel *ev = cs_session_evsel(s, i);

		if (ev->index + 1 > max)
			max = ev->index + 1;
	}
	/* the header counts samples: every one must be in */
	err = cs_report_flush(run->report);
	if (err)
		return said(run, err);
	names = calloc(max ? max : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct cs_evsel *ev = cs_session_evsel(s, i);

		names[ev->index] = ev->name;
	}
	write_header(run, s);
	errno = 0;
	err = cs_report_write(run->report, run->out, names, max);
	free(names);
	if (err < 0 && cs_report_error(run->report))
		return 1;
	if (err == -EIO) {
		run->write_err = errno ? errno : EIO;
		return 1;
	}
	return err;
}

void cs_report_run_release(struct cs_report_run *run)
{
	free(run->frames);
	free(run->spaces);
	free(run->expanded);
	free(run->inlined);
	free(run->inline_cache);
	run->inline_cache = NULL;
	run->frames = run->expanded = NULL;
	run->spaces = NULL;
	run->inlined = NULL;
}

const struct cs_output_ops cs_report_ops = {
	.begin = run_begin,
	.sample = run_sample,
	.end = run_end,
};
