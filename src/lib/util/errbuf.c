#include "lib/util/errbuf.h"

#include <stdarg.h>
#include <stdio.h>

int cs_error(struct cs_errbuf *eb, int err, const char *fmt, ...)
{
	va_list ap;

	if (!eb || eb->msg[0])
		return err;
	va_start(ap, fmt);
	vsnprintf(eb->msg, sizeof(eb->msg), fmt, ap);
	va_end(ap);
	return err;
}

void cs_error_clear(struct cs_errbuf *eb)
{
	if (eb)
		eb->msg[0] = '\0';
}
