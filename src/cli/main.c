/* main.c - dispatches `callstitch COMMAND [ARGS]` to its command. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/cli.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "record", cmd_record, "Record a profile, with deferred user callchains when the kernel has them" },
	{ "script", cmd_script, "Print every sample with its stitched stack (perf script layout)" },
	{ "report", cmd_report, "Summarise a profile by symbol, with call graphs (perf report --stdio)" },
	{ "diff",   cmd_diff,   "Compare two profiles by symbol (perf diff)" },
	{ "folded", cmd_folded, "Print folded stacks for flame graph tools" },
	{ "flame",  cmd_flame,  "Write an interactive flame graph as one HTML file" },
	{ "pprof",  cmd_pprof,  "Write a pprof profile (gzipped protobuf)" },
	{ "speedscope", cmd_speedscope, "Write a speedscope profile (JSON), one per thread" },
	{ "inject", cmd_inject, "Rewrite a profile with stitched stacks, for tools that predate deferral" },
	{ "archive", cmd_archive, "Pack the binaries, debug files and kernel symbols a profile needs" },
	{ "dump",   cmd_dump,   "Show every record of a perf.data file, decoded (perf report -D)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: callstitch [--version] [--help] COMMAND [ARGS]\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nSee 'callstitch COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 129;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char *sub[] = { argv[2], "--help", NULL };
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (!strcmp(commands[i].name, argv[2]))
					return commands[i].run(2, sub);
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("callstitch %s\n", CS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, argv[1]))
			return commands[i].run(argc - 1, argv + 1);
	cli_error("'%s' is not a callstitch command. See 'callstitch --help'.", argv[1]);
	return 129;
}
