/* common.c - helpers of the fuzz harnesses (see fuzz.h). */
#include "fuzz.h"
#include "outputs/script.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef CS_SOURCE_DIR
#error "build with -DCS_SOURCE_DIR=\"...\" (the Makefile does)"
#endif

int fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0)
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) !=
					    (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET))
		fuzz_fail("fuzz: cannot fill a memfd");
	return fd;
}

FILE *fuzz_devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	if (!f)
		fuzz_fail("fuzz: cannot open /dev/null");
	return f;
}

struct cs_session_opts fuzz_session_opts(int fd)
{
	CS_SESSION_OPTS(o,
		.path = "fuzz.data",
		.fd = fd,
		.kallsyms = CS_SOURCE_DIR "/fuzz/symfs/kallsyms",
		.symfs = CS_SOURCE_DIR "/fuzz/symfs",
		.no_debuginfod = true,
	);

	return o;
}

void fuzz_session(const struct cs_session_opts *o,
		  const struct cs_output_ops *ops, void *ctx)
{
	struct cs_session *s = NULL;

	if (!cs_session_open(o, &s))
		cs_session_run(s, ops, ctx);
	cs_session_free(s);
}

void fuzz_script(const struct cs_session_opts *o)
{
	/* no inlined frames: those read the DWARF of every binary the
	 * profile names, which the build-id rule may find on the host (libc's
	 * debug file): 15 times slower, and the same bytes every time */
	struct cs_script_opts so = {
		.out = fuzz_devnull(),
		.no_merge = o->no_merge,
		.no_inline = true,
	};
	struct cs_session *s = NULL;
	struct cs_script *sc;

	if (cs_script_new(&so, &sc))
		return;
	if (!cs_session_open(o, &s))
		cs_session_run(s, &cs_script_ops, sc);
	/* before the session goes: a run stopped by an error leaves samples
	 * held, which point into it */
	cs_script_flush(sc);
	cs_script_free(sc);
	cs_session_free(s);
}

void fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

bool fuzz_utf8_ok(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = s[i];
		size_t len;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 2, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 3, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 4, cp = c & 0x07;
		else
			return false;
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
			return false;
		i += len;
	}
	return true;
}
