/* stitch_only - runs the whole read, order and stitch pipeline on a
 * profile and prints only counts: the speed of the library without an
 * output's formatting, for bench/run.sh.
 *
 *   stitch_only FILE [REPEAT [ahead]]
 *
 * ahead: the records are read on a thread of their own (read_ahead).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <callstitch/callstitch.h>

struct totals {
	uint64_t samples;
	uint64_t frames;
};

static int count_sample(void *ctx, const struct cs_stitched *s)
{
	struct totals *t = ctx;

	t->samples++;
	/* touch the chain, as an output would: the user part's marker is
	 * implied when it does not begin with one (user_marker_implied) */
	t->frames += s->chain_nr + s->user_nr;
	if (s->user_nr && s->user[0] != CS_CONTEXT_USER &&
	    s->user[0] != CS_CONTEXT_USER_DEFERRED)
		t->frames++;
	return 0;
}

int main(int argc, char **argv)
{
	const struct cs_output_ops ops = { .sample = count_sample };
	int repeat = argc > 2 ? atoi(argv[2]) : 1;
	bool ahead = argc > 3 && !strcmp(argv[3], "ahead");
	struct totals t = { 0 };

	if (argc < 2 || repeat < 1) {
		fprintf(stderr, "usage: stitch_only FILE [REPEAT [ahead]]\n");
		return 2;
	}
	for (int i = 0; i < repeat; i++) {
		struct cs_session_opts o = { .sz = sizeof(o), .path = argv[1],
					     .fd = -1, .chain_parts = true,
					     .user_marker_implied = true,
					     .read_ahead = ahead };
		struct cs_session *s = NULL;
		int err = cs_session_open(&o, &s);

		if (!err)
			err = cs_session_run(s, &ops, &t);
		if (err) {
			fprintf(stderr, "stitch_only: %s\n",
				s ? cs_session_error(s) : "out of memory");
			cs_session_free(s);
			return 1;
		}
		cs_session_free(s);
	}
	printf("%" PRIu64 " samples, %" PRIu64 " frames\n", t.samples, t.frames);
	return 0;
}
