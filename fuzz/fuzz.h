/* fuzz.h - what the libFuzzer harnesses in fuzz/ share.
 *
 * Every harness defines LLVMFuzzerTestOneInput(). It is linked either with
 * libFuzzer (clang, `make fuzz`) or with replay.c (the normal suite's
 * sanitized build), which calls it once per file of a corpus. A harness
 * never keeps state between inputs beyond what fuzz_init() sets up once;
 * it aborts (so both drivers report it) when an output breaks a rule that
 * the input cannot excuse.
 */
#ifndef CS_FUZZ_H
#define CS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <callstitch/callstitch.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file descriptor whose file holds exactly data (a memfd reused across
 * inputs), at offset 0. Aborts if the memfd cannot be made. */
int fuzz_file(const uint8_t *data, size_t size);

/* A stream on /dev/null for the text outputs, opened once. */
FILE *fuzz_devnull(void);

/* Session options for profile harnesses: kallsyms and symfs from
 * fuzz/symfs (the real-kernel fixture's program and a small kallsyms), so
 * symbol lookups run and never reach the host's files. */
struct cs_session_opts fuzz_session_opts(int fd);

/* Runs a whole session through ops/ctx and frees it. */
void fuzz_session(const struct cs_session_opts *o,
		  const struct cs_output_ops *ops, void *ctx);

/* Runs a whole session with every sample printed as `script` prints it
 * (to /dev/null), unmerged if o->no_merge. */
void fuzz_script(const struct cs_session_opts *o);

/* Aborts with a message: the harness found a broken rule. */
void fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* True if s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
bool fuzz_utf8_ok(const uint8_t *s, size_t n);

#endif
