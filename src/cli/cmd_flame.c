/* cmd_flame.c - `callstitch flame`: an interactive flame graph, one HTML file. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "lib/util/replaceable.h"
#include "outputs/flame.h"

static const char usage_text[] =
	"usage: callstitch flame [-o FILE] [-i FILE] [--title TEXT] [--no-kernel] [--no-inline] [-j N]\n"
	"       callstitch flame --diff [OPTIONS] OLD NEW\n"
	"\n"
	"Writes the profile's stitched stacks as an interactive flame graph: one\n"
	"self-contained HTML file (inline script and style, no network needed).\n"
	"Click a frame to zoom, search by substring or regex, hover for details.\n"
	"With --diff, a differential flame graph: NEW's shape, each frame coloured\n"
	"by how its share changed since OLD (red grew, blue shrank).\n"
	"\n"
	"  -o, --output FILE     where to write the page (default flame.html; - for stdout)\n"
	"      --title TEXT      the page's title (default: \"Flame graph of INPUT\")\n"
	"      --no-kernel       leave kernel frames out (user stacks only)\n"
	"      --no-inline       no frames for functions inlined at user addresses\n"
	"      --diff            compare two profiles, OLD and NEW\n"
	CLI_JOBS_COUNTING_HELP("", "page")
	CLI_OFF_CPU_HELP
	"                        (the default draws the on-CPU samples)\n"
	CLI_INPUT_HELP
	"  -h, --help            this text\n";

enum { OPT_TITLE = 0x2000, OPT_NO_KERNEL, OPT_NO_INLINE, OPT_DIFF };

static const struct option long_options[] = {
	{ "output",    required_argument, NULL, 'o' },
	{ "title",     required_argument, NULL, OPT_TITLE },
	{ "no-kernel", no_argument,       NULL, OPT_NO_KERNEL },
	{ "no-inline", no_argument,       NULL, OPT_NO_INLINE },
	{ "diff",      no_argument,       NULL, OPT_DIFF },
	{ "jobs",      required_argument, NULL, 'j' },
	{ "help",      no_argument,       NULL, 'h' },
	CLI_INPUT_OPTIONS,
	CLI_OFF_CPU_OPTIONS,
	{ NULL, 0, NULL, 0 }
};

/* Writes the page to path whole (see cs_replace_open), so an interrupted
 * run never leaves a truncated page where a good one was. */
static int write_page(struct cs_flame *tree, const struct cs_flame_meta *meta,
		      const char *path)
{
	struct cs_replace out;
	FILE *f;
	int err;

	if (!strcmp(path, "-")) {
		err = cs_flame_write_html(tree, meta, stdout);
		if (!err && fflush(stdout))
			err = -errno;
		if (err)
			cli_error("flame: writing to stdout: %s", strerror(-err));
		return err ? 1 : 0;
	}
	err = cs_replace_open(&out, path, 0666);
	if (err) {
		cli_error("flame: cannot create %s: %s", path, strerror(-err));
		return 1;
	}
	f = fdopen(out.fd, "w");
	if (!f) {
		cli_error("flame: cannot create %s: %s", path, strerror(errno));
		cs_replace_abort(&out);
		return 1;
	}
	err = cs_flame_write_html(tree, meta, f);
	/* fclose closes out.fd: the commit only renames */
	if (fclose(f) && !err)
		err = -errno;
	out.fd = -1;
	if (!err)
		err = cs_replace_commit(&out);
	else
		cs_replace_abort(&out);
	if (err) {
		cli_error("flame: writing %s: %s", path, strerror(-err));
		return 1;
	}
	return 0;
}

/* The baseline of a differential graph: OLD's samples along NEW's paths. */
static int read_base(struct cli_input *in, const char *old,
		     struct cs_flame_output *fo)
{
	if (cs_flame_output_start_base(fo)) {
		cli_error("flame: out of memory");
		return 1;
	}
	return cli_run_path(in, old, &cs_flame_output_ops, fo);
}

int cmd_flame(int argc, char **argv)
{
	struct cli_input in = { .cmd = "flame", .off_cpu_aware = true };
	struct cs_flame_output_opts fopts = { 0 };
	struct cs_flame_output *fo = NULL;
	struct cs_session *s;
	const char *output = "flame.html", *title = NULL, *old = NULL;
	char *default_title = NULL;
	bool diff = false;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "o:i:j:qh", long_options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_NO_KERNEL:
			fopts.no_kernel = true;
			break;
		case OPT_NO_INLINE:
			fopts.no_inline = true;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		default:
			if (cli_option(&in, opt, optarg, usage_text, &rc))
				break;
			return rc;
		}
	}
	if (diff) {
		/* NEW gives the shape; OLD the baseline */
		if (argc - optind != 2) {
			cli_error("flame: --diff compares two profiles: OLD NEW");
			fputs(usage_text, stderr);
			return 129;
		}
		old = argv[optind];
		in.input = argv[optind + 1];
		in.name_input = true;
	} else if (!cli_no_operands("flame", argc, argv, usage_text)) {
		return 129;
	}

	fopts.off_cpu = in.view == CS_VIEW_OFF_CPU;
	fopts.jobs = cli_jobs_counting(&in);
	/* every on-CPU sample's stack is resolved (whole: --no-kernel drops
	 * frames after): its binaries may load ahead; the off-CPU
	 * switch-outs left out are tracepoints. Not for --diff's baseline,
	 * read along another profile's paths. */
	if (!diff && !fopts.off_cpu)
		in.preload = CS_PRELOAD_SYMBOLS | CS_PRELOAD_NOT_TRACEPOINTS |
			     (fopts.no_inline ? 0 : CS_PRELOAD_INLINES);
	s = cli_open(&in);
	if (!s)
		return 1;
	if (cs_flame_output_new(&fopts, &fo)) {
		cli_error("flame: out of memory");
		cs_session_free(s);
		return 1;
	}
	rc = cli_run(s, &in, &cs_flame_output_ops, fo);
	if (!rc && cs_flame_output_left_out(fo) && !in.quiet)
		cli_warn("%" PRIu64 " %s left out: %s",
			 cs_flame_output_left_out(fo), fopts.off_cpu ?
			 "on-CPU samples" : "off-CPU switch-outs", fopts.off_cpu ?
			 "without --off-cpu they are drawn" :
			 "--off-cpu draws their time");
	if (!rc) {
		const struct cs_file_info *info = cs_session_info(s);
		const struct cs_stats *st = cs_session_stats(s);
		const char *input = cli_input_path(&in);
		struct cs_flame_meta meta = {
			.title = title,
			.events = cs_flame_output_events(fo),
			.deferred = st->samples_deferred > 0,
			.stitched = st->stitched,
			.stitched_late = st->stitched_late,
			.kernel_only = st->kernel_only,
			/* one event: its name is in the header, not a layer */
			.fold_single_top = true,
			.unit = fopts.off_cpu ? "ns" : NULL,
			.base_title = old,
		};

		if (info) {
			meta.host = info->hostname;
			meta.os_release = info->os_release;
			meta.cmdline = info->cmdline;
		}
		if (!title) {
			int n = diff ? asprintf(&default_title, "Differential flame graph: "
						"%s against %s", input, old) :
				asprintf(&default_title, "Flame graph of %s",
					 strcmp(input, "-") ? input : "stdin");

			if (n < 0)
				default_title = NULL;
			meta.title = default_title;
		}
		if (diff)
			rc = read_base(&in, old, fo);
		if (!rc)
			rc = write_page(cs_flame_output_tree(fo), &meta, output);
	}
	free(default_title);
	cs_flame_output_free(fo);
	cs_session_free(s);
	return rc;
}
