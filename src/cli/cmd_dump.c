/* cmd_dump.c - `callstitch dump`: every record of a profile, decoded. */
#include "cli/commands.h"
#include "cli/cli.h"
#include "outputs/dump.h"
#include "lib/read/reader.h"
#include "lib/util/errbuf.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
	"usage: callstitch dump [-i FILE] [-x] [--header-only]\n"
	"\n"
	"Shows every record of a perf.data file in file order with its offset,\n"
	"size, type and decoded fields (like perf report -D): callchains with\n"
	"their context markers named, the cookie of each deferred sample and\n"
	"each CALLCHAIN_DEFERRED record with its cookie and user stack. Records\n"
	"inside COMPRESSED payloads show the offset of their payload and +z.\n"
	"A stream (pipe mode) tells its events and features as records: its\n"
	"summary comes at the end.\n"
	"\n"
	"  -i, --input FILE      profile to read (default perf.data; - for stdin)\n"
	"  -x, --hex             also show the bytes of each record (native order)\n"
	"      --header-only     only the header, events and features\n"
	"      --no-stats        no per-type totals at the end\n"
	"  -h, --help            this text\n";

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "input",       required_argument, NULL, 'i' },
		{ "hex",         no_argument,       NULL, 'x' },
		{ "header-only", no_argument,       NULL, 'H' },
		{ "no-stats",    no_argument,       NULL, 'S' },
		{ "help",        no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct cs_dump_opts o = { 0 };
	const char *input = "perf.data";
	struct cs_errbuf eb = { { 0 } };
	struct cs_reader *r;
	static char obuf[1 << 16];
	int c, err;

	optind = 1;
	while ((c = getopt_long(argc, argv, "i:xh", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'x': o.hex = true; break;
		case 'H': o.header_only = true; break;
		case 'S': o.no_stats = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default:  fputs(usage, stderr); return 129;
		}
	}
	if (optind < argc) {
		cli_error("dump: unexpected argument '%s'", argv[optind]);
		fputs(usage, stderr);
		return 129;
	}
	err = cs_reader_open(input, -1, &eb, &r);
	if (err < 0) {
		cli_error("%s", eb.msg[0] ? eb.msg : strerror(-err));
		return 1;
	}
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	err = cs_dump(r, stdout, &o, NULL, &eb);
	fflush(stdout);
	if (err < 0)
		cli_error("%s", eb.msg[0] ? eb.msg : strerror(-err));
	else if (cs_reader_warning(r))
		cli_warn("%s", cs_reader_warning(r));
	if (err >= 0 && cs_reader_truncated(r))
		cli_warn("%s: the recording was cut short (its header gives no "
			 "data size); read up to the last whole record",
			 cs_reader_path(r));
	cs_reader_free(r);
	return err < 0 ? 1 : 0;
}
