/* cs_canon.c - every stitched sample of a profile, one canonical line each.
 *
 * Uses only the public API (callstitch.h), so that what it prints is what
 * any library user gets. The line format is gen_synth's --expect format:
 *
 *     TID TIME STATE REASON CHAIN
 *
 * in delivery order; sort both to compare (sample times of synthetic
 * profiles are unique). --stats prints the session's counts on stderr in
 * the same words as gen_synth's summary.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <callstitch/callstitch.h>

#include "canon_hex.h"

static const char usage[] =
"usage: cs_canon [-i FILE] [--stats] [--no-merge] [--file-order]\n"
"\n"
"Prints each sample of a perf.data file as it is delivered, stitched:\n"
"  TID TIME STATE REASON CHAIN\n"
"STATE is stitched, late, kernel-only, original or unmerged; REASON why a\n"
"user part is missing (lost, superseded, exited, end) or -; CHAIN the\n"
"merged callchain in hex, comma separated.\n"
"\n"
"  -i, --input FILE   profile to read (default perf.data; - = stdin)\n"
"      --stats        the stitching counts on stderr at the end\n"
"      --no-merge     deliver samples as recorded\n"
"      --file-order   as found in the file: no time ordering, no merging\n"
"  -h, --help         this text\n";

struct canon {
	FILE *out;
	uint64_t delivered;
	char line[65536 + 64];
};

static const char *state_name(enum cs_chain_state s)
{
	switch (s) {
	case CS_CHAIN_ORIGINAL:		return "original";
	case CS_CHAIN_STITCHED:		return "stitched";
	case CS_CHAIN_STITCHED_LATE:	return "late";
	case CS_CHAIN_KERNEL_ONLY:	return "kernel-only";
	case CS_CHAIN_UNMERGED:		return "unmerged";
	case CS_CHAIN_UNWOUND:		return "unwound";
	}
	return "?";
}

static int on_sample(void *ctx, const struct cs_stitched *s)
{
	struct canon *c = ctx;
	const struct cs_sample *smp = &s->event->sample;
	size_t n;

	n = (size_t)snprintf(c->line, 64, "%" PRIu32 " %" PRIu64 " %s %s ",
			     smp->tid, smp->time, state_name(s->state),
			     s->state == CS_CHAIN_KERNEL_ONLY ?
			     cs_missing_reason_name(s->missing) : "-");
	/* a record is at most 64 KiB: so is its chain in hex */
	for (uint64_t i = 0; i < s->chain_nr && n < sizeof(c->line) - 20; i++) {
		if (i)
			c->line[n++] = ',';
		n += canon_put_hex(c->line + n, s->chain[i]);
	}
	if (!s->chain_nr)
		c->line[n++] = '-';
	c->line[n++] = '\n';
	c->delivered++;
	return fwrite(c->line, 1, n, c->out) == n ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "stats", no_argument, NULL, 'S' },
		{ "no-merge", no_argument, NULL, 'M' },
		{ "file-order", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct cs_session_opts o = { .sz = sizeof(o), .path = "perf.data", .fd = -1 };
	struct cs_output_ops ops = { .sample = on_sample };
	struct canon *c = calloc(1, sizeof(*c));
	struct cs_session *s = NULL;
	bool stats = false;
	int opt, err;

	if (!c) {
		fprintf(stderr, "cs_canon: out of memory\n");
		return 1;
	}
	while ((opt = getopt_long(argc, argv, "i:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'i': o.path = optarg; break;
		case 'S': stats = true; break;
		case 'M': o.no_merge = true; break;
		case 'F': o.no_merge = o.ordered_off = true; break;
		case 'h': fputs(usage, stdout); free(c); return 0;
		default: fputs(usage, stderr); free(c); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "cs_canon: unexpected argument '%s'\n", argv[optind]);
		free(c);
		return 2;
	}
	c->out = stdout;
	err = cs_session_open(&o, &s);
	if (!err)
		err = cs_session_run(s, &ops, c);
	if (err) {
		fprintf(stderr, "cs_canon: %s\n", s ? cs_session_error(s) : "out of memory");
		cs_session_free(s);
		free(c);
		return 1;
	}
	if (fflush(stdout)) {
		perror("cs_canon: stdout");
		err = 1;
	}
	if (stats) {
		const struct cs_stats *st = cs_session_stats(s);

		fprintf(stderr, "samples=%" PRIu64 " deferred=%" PRIu64
			" stitched=%" PRIu64 " late=%" PRIu64 " kernel-only=%" PRIu64
			" lost=%" PRIu64 " superseded=%" PRIu64 " exited=%" PRIu64
			" end=%" PRIu64 " original=%" PRIu64 " records=%" PRIu64
			" duplicates=%" PRIu64 " orphans=%" PRIu64
			" lost-events=%" PRIu64 "\n",
			st->samples, st->samples_deferred, st->stitched,
			st->stitched_late, st->kernel_only,
			st->kernel_only_by[CS_MISSING_LOST],
			st->kernel_only_by[CS_MISSING_SUPERSEDED],
			st->kernel_only_by[CS_MISSING_EXITED],
			st->kernel_only_by[CS_MISSING_END], st->original,
			st->deferred_records, st->duplicate_records,
			st->orphan_records, st->lost_events);
		fprintf(stderr, "delivered=%" PRIu64 "\n", c->delivered);
	}
	cs_session_free(s);
	free(c);
	return err ? 1 : 0;
}
