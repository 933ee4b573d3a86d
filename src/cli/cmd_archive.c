/* cmd_archive.c - `callstitch archive`: a profile's binaries, debug files
 * and kernel symbols in one file, for reading the profile elsewhere. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "lib/machine/machine.h"
#include "lib/util/errbuf.h"
#include "outputs/archive.h"

static const char usage_text[] =
	"usage: callstitch archive [-i FILE] [-o ARCHIVE] [options]\n\n"
	"Packs the files behind a profile's symbols - every binary with samples,\n"
	"its separate debug file and the kernel's symbol list, found as the other\n"
	"commands find them - into a zstd-compressed tar keyed by build id\n"
	"(perf's build-id cache layout). On another machine every reading\n"
	"command takes it as --archive FILE; unpacked (tar -xf FILE -C DIR), it\n"
	"is a --symfs DIR.\n\n"
	"  -o, --output FILE     the archive (default: the profile's name + .tar.zst;\n"
	"                        - for standard output)\n"
	CLI_INPUT_HELP
	"  -h, --help            this text\n";

int cmd_archive(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_INPUT_OPTIONS,
		{ "output", required_argument, NULL, 'o' },
		{ "help",   no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input in = { .cmd = "archive" }, run_in;
	struct cs_archive_result res;
	struct cs_errbuf eb = { { 0 } };
	struct cs_session *s = NULL;
	const char *output = NULL, *kerr;
	char *def = NULL;
	int c, rc = 129;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:o:qh", longopts, NULL)) != -1) {
		if (c == 'o')
			output = optarg;
		else if (!cli_option(&in, c, optarg, usage_text, &rc))
			return rc;
	}
	if (!cli_no_operands("archive", argc, argv, usage_text))
		return 129;
	if (output && !strcmp(output, "-") && isatty(STDOUT_FILENO)) {
		cli_error("archive: -o - writes binary data: redirect stdout to a file or pipe");
		return 129;
	}
	if (!output) {
		if (!strcmp(cli_input_path(&in), "-")) {
			cli_error("archive: reading stdin: name the archive with -o");
			return 129;
		}
		if (asprintf(&def, "%s.tar.zst", cli_input_path(&in)) < 0)
			return 1;
		output = def;
	}
	rc = 1;
	s = cli_open(&in);
	if (!s)
		goto out;
	run_in = in;
	run_in.quiet = true;		/* the stitching summary says nothing here */
	if (cli_run(s, &run_in, &cs_archive_ops, s))
		goto out;
	if (cs_archive_write(s, output, &res, &eb)) {
		cli_error("archive: %s", eb.msg);
		goto out;
	}
	rc = 0;
	if (res.missing)
		cli_warn("%u binar%s with samples %s not found here (%s%s): %s "
			 "frames stay unknown elsewhere too", res.missing,
			 res.missing == 1 ? "y" : "ies", res.missing == 1 ? "was" : "were",
			 res.first_missing, res.missing > 1 ? ", ..." : "",
			 res.missing == 1 ? "its" : "their");
	kerr = cs_machine_kallsyms_error(cs_session_machine(s));
	if (res.kallsyms_unkeyed)
		cli_warn("no kernel symbols packed: the profile records no build "
			 "id for the kernel to find them by");
	else if (!res.kallsyms && kerr)
		cli_warn("no kernel symbols packed: %s", kerr);
	if (in.quiet)
		goto out;
	fprintf(stderr, "callstitch: wrote %s: %u binar%s, %u debug file%s%s "
		"(%.1f MB before compression)\n",
		strcmp(output, "-") ? output : "standard output", res.binaries,
		res.binaries == 1 ? "y" : "ies", res.debug_files,
		res.debug_files == 1 ? "" : "s",
		res.kallsyms ? ", the kernel's symbols" : "", res.bytes / 1048576.0);
	if (strcmp(output, "-"))
		fprintf(stderr, "callstitch: elsewhere: callstitch script -i %s "
			"--archive %s\n", cli_input_path(&in), output);
out:
	cs_session_free(s);
	free(def);
	return rc;
}
