/* frames.c - a stitched sample's callchain as resolved frames. */
#include "lib/machine/frames.h"
#include "abi/perf_abi.h"
#include "lib/stitch/parts.h"

#include <stdbool.h>
#include <string.h>

static uint8_t marker_mode(uint64_t ip)
{
	switch (ip) {
	case CS_CONTEXT_HV:		return CS_MISC_HYPERVISOR;
	case CS_CONTEXT_KERNEL:		return CS_MISC_KERNEL;
	case CS_CONTEXT_USER:
	case CS_CONTEXT_USER_DEFERRED:	return CS_MISC_USER;
	case CS_CONTEXT_GUEST_KERNEL:	return CS_MISC_GUEST_KERNEL;
	case CS_CONTEXT_GUEST_USER:	return CS_MISC_GUEST_USER;
	}
	return CS_MISC_CPUMODE_UNKNOWN;
}

static void put(struct cs_frame *out, size_t cap, size_t n, uint64_t addr,
		uint8_t mode, enum cs_frame_kind kind, enum cs_missing_reason why)
{
	struct cs_frame *f;

	if (n >= cap)
		return;
	f = &out[n];
	f->addr = addr;
	f->cpumode = mode;
	f->kind = kind;
	f->missing = why;
}

/* Entry i of the whole chain, which may come in two parts, the user one
 * starting at user_at: after the kernel part, and after the user marker
 * when that is implied (lib/stitch/parts.h). */
static inline uint64_t chain_at(const struct cs_stitched *s, uint64_t user_at,
				uint64_t i)
{
	if (i < s->chain_nr)
		return s->chain[i];
	if (i < user_at)
		return CS_CONTEXT_USER;
	return s->user[i - user_at];
}

size_t cs_frames_walk(const struct cs_stitched *s, struct cs_frame *out,
		      size_t cap)
{
	const struct cs_sample *smp = &s->event->sample;
	uint8_t mode = smp->misc & CS_MISC_CPUMODE_MASK;
	bool stitched = s->state == CS_CHAIN_STITCHED ||
			s->state == CS_CHAIN_STITCHED_LATE;
	bool deferred_user = false;
	uint64_t user_at = s->chain_nr + cs_parts_marker_implied(s);
	uint64_t nr = user_at + s->user_nr;
	size_t n = 0;

	if (!nr) {
		if (s->state != CS_CHAIN_KERNEL_ONLY) {
			put(out, cap, n++, smp->ip, mode, CS_FRAME_ADDR,
			    CS_MISSING_NONE);
			return n;
		}
	}
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = chain_at(s, user_at, i);

		/* the user part of a stitched chain came from a deferred
		 * record: addresses only, even at or above CONTEXT_MAX (JIT
		 * code), where perf shows no stack at all */
		if (!cs_is_context_marker(ip) || deferred_user) {
			put(out, cap, n++, ip, mode, CS_FRAME_ADDR,
			    CS_MISSING_NONE);
			continue;
		}
		if (stitched && ip == CS_CONTEXT_USER)
			deferred_user = true;
		if (ip != CS_CONTEXT_GUEST &&
		    marker_mode(ip) == CS_MISC_CPUMODE_UNKNOWN) {
			/* not a context the ABI defines: the chain is corrupt
			 * and, as perf does, none of it is shown */
			return 0;
		}
		if (ip != CS_CONTEXT_GUEST)
			mode = marker_mode(ip);
		if (ip == CS_CONTEXT_USER_DEFERRED) {
			/* a deferred marker without its cookie is not one */
			if (i + 1 == nr)
				return 0;
			/* the raw view: the entry after the marker is the
			 * cookie, not an address */
			put(out, cap, n++, chain_at(s, user_at, ++i), CS_MISC_USER,
			    CS_FRAME_COOKIE, CS_MISSING_NONE);
		}
	}
	if (s->state == CS_CHAIN_KERNEL_ONLY)
		put(out, cap, n++, s->cookie, CS_MISC_USER,
		    CS_FRAME_MISSING_USER, s->missing);
	return n;
}

void cs_frame_resolve(struct cs_machine *m, uint32_t pid, struct cs_frame *f)
{
	if (f->kind == CS_FRAME_ADDR)
		cs_machine_resolve(m, pid, f->cpumode, f->addr, &f->loc);
	else
		memset(&f->loc, 0, sizeof(f->loc));
}

size_t cs_frames_resolve(struct cs_machine *m, const struct cs_stitched *s,
			 struct cs_frame *out, size_t cap)
{
	size_t n = cs_frames_walk(s, out, cap);
	uint32_t pid = s->event->sample.pid;

	for (size_t i = 0; i < n && i < cap; i++)
		cs_frame_resolve(m, pid, &out[i]);
	return n;
}
