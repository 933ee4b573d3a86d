/* out_inlines.c - stacks with inlined functions (see out_inlines.h). */
#include "outputs/out_inlines.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/machine/machine.h"

/* The functions inlined at f's address, through the cache when it has
 * them (a dso's address has the same answer in every process). */
static size_t lookup(struct cs_machine *m, uint32_t pid,
		     const struct cs_frame *f, const char **names,
		     struct cs_out_inline_cache *c)
{
	uint64_t h;
	size_t k, s = 0;

	if (c && f->loc.dso_name) {
		h = (f->loc.dso_addr ^ (uintptr_t)f->loc.dso_name) * 0x9e3779b97f4a7c15ULL;
		s = h >> 52;	/* 12 bits: CS_OUT_INLINE_CACHE slots */
		if (c->slot[s].dso == f->loc.dso_name &&
		    c->slot[s].addr == f->loc.dso_addr) {
			memcpy(names, c->slot[s].names, c->slot[s].n * sizeof(*names));
			return c->slot[s].n;
		}
	}
	k = cs_machine_inlines(m, pid, f->addr, names, 32);
	if (k > 32)
		k = 32;
	if (c && f->loc.dso_name && k <= CS_OUT_INLINE_NAMES) {
		c->slot[s].dso = f->loc.dso_name;
		c->slot[s].addr = f->loc.dso_addr;
		c->slot[s].n = (uint8_t)k;
		memcpy(c->slot[s].names, names, k * sizeof(*names));
	}
	return k;
}

size_t cs_out_expand_inlines(struct cs_machine *m, uint32_t pid,
			     const struct cs_frame *in, size_t n,
			     struct cs_frame *out, uint8_t *kinds, size_t cap)
{
	return cs_out_expand_inlines_cached(m, pid, in, n, out, kinds, cap, NULL);
}

size_t cs_out_expand_inlines_cached(struct cs_machine *m, uint32_t pid,
				    const struct cs_frame *in, size_t n,
				    struct cs_frame *out, uint8_t *kinds,
				    size_t cap, struct cs_out_inline_cache *cache)
{
	const char *names[32];
	size_t w = 0;

	_Static_assert(CS_OUT_INLINE_CACHE == 1 << 12, "lookup() hashes to 12 bits");
	for (size_t i = 0; i < n && w < cap; i++) {
		const struct cs_frame *f = &in[i];
		size_t k = 0;

		/* script's rule: user addresses of a known function only */
		if (f->kind == CS_FRAME_ADDR && f->loc.sym && !f->loc.kernel)
			k = lookup(m, pid, f, names, cache);
		for (size_t j = 0; j < k && w < cap; j++, w++) {
			out[w] = *f;
			out[w].loc.sym = names[j];
			kinds[w] = strcmp(names[j], f->loc.sym) ?
				   CS_OUT_INLINED : CS_OUT_INLINED_SAME;
		}
		if (w < cap) {
			out[w] = *f;
			kinds[w++] = CS_OUT_NOT_INLINED;
		}
	}
	return w;
}

int cs_out_stack_init(struct cs_out_stack *st)
{
	st->frames = malloc(CS_FRAMES_MAX * sizeof(*st->frames));
	st->expanded = malloc(CS_FRAMES_MAX * sizeof(*st->expanded));
	st->inlined = malloc(CS_FRAMES_MAX);
	st->cache = calloc(1, sizeof(*st->cache));
	return st->frames && st->expanded && st->inlined && st->cache ?
	       0 : -ENOMEM;
}

void cs_out_stack_release(struct cs_out_stack *st)
{
	free(st->frames);
	free(st->expanded);
	free(st->inlined);
	free(st->cache);
	memset(st, 0, sizeof(*st));
}

size_t cs_out_stack_resolve(struct cs_out_stack *st, struct cs_machine *m,
			    const struct cs_stitched *s, bool inlines,
			    const struct cs_frame **out)
{
	size_t n = cs_frames_resolve(m, s, st->frames, CS_FRAMES_MAX);

	if (n > CS_FRAMES_MAX)
		n = CS_FRAMES_MAX;
	*out = st->frames;
	if (!inlines)
		return n;
	*out = st->expanded;
	return cs_out_expand_inlines_cached(m, s->event->sample.pid, st->frames,
					    n, st->expanded, st->inlined,
					    CS_FRAMES_MAX, st->cache);
}
