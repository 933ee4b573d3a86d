/* errbuf.h - one-line error messages carried from library code to the CLI.
 *
 * Library code never prints. It fills an errbuf with "file: what, where"
 * and returns a negative errno; the caller decides what the user sees.
 */
#ifndef CS_ERRBUF_H
#define CS_ERRBUF_H

#include <stddef.h>

struct cs_errbuf {
	char msg[512];
};

/* Formats the message (printf-style) and returns err, so a caller can write
 * `return cs_error(eb, -EBADMSG, "...", ...);`. The first message wins:
 * a later call does not overwrite an earlier, more precise one. */
int cs_error(struct cs_errbuf *eb, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Clears the message so the next cs_error() is recorded. */
void cs_error_clear(struct cs_errbuf *eb);

#endif
