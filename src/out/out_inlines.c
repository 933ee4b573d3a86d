/* out_inlines.c - stacks with inlined functions (see out_inlines.h). */
#include "out/out_inlines.h"

#include <stdbool.h>
#include <string.h>

#include "lib/machine/machine.h"

size_t cs_out_expand_inlines(struct cs_machine *m, uint32_t pid,
			     const struct cs_frame *in, size_t n,
			     struct cs_frame *out, uint8_t *kinds, size_t cap)
{
	const char *names[32];
	size_t w = 0;

	for (size_t i = 0; i < n && w < cap; i++) {
		const struct cs_frame *f = &in[i];
		size_t k = 0;

		/* script's rule: user addresses of a known function only */
		if (f->kind == CS_FRAME_ADDR && f->loc.sym && !f->loc.kernel)
			k = cs_machine_inlines(m, pid, f->addr, names, 32);
		if (k > 32)
			k = 32;
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
