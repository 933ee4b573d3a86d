/* maps.c - sorted memory maps with mmap()-like replacement, in which data
 * maps never cover code. */
#include "lib/machine/maps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* First index whose end is above addr. Every user address a profile
 * resolves searches its process's maps, and which half holds it is as
 * likely as not at each step: the halving is a conditional move, not a
 * branch to mispredict. */
static size_t first_above(const struct cs_maps *m, uint64_t addr)
{
	const struct cs_map *base = m->map;
	size_t n = m->nr;

	if (!n)
		return 0;
	while (n > 1) {
		size_t half = n / 2;

		base = base[half].end <= addr ? base + half : base;
		n -= half;
	}
	return (size_t)(base - m->map) + (base->end <= addr);
}

static int reserve(struct cs_maps *m, size_t n)
{
	struct cs_map *p;
	size_t cap;

	if (n <= m->cap)
		return 0;
	cap = m->cap ? m->cap * 2 : 16;
	while (cap < n)
		cap *= 2;
	p = realloc(m->map, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	m->map = p;
	m->cap = cap;
	return 0;
}

/* [start, end) replaces whatever it overlaps */
static int replace_range(struct cs_maps *m, uint64_t start, uint64_t end,
			 uint64_t pgoff, struct cs_dso *dso, bool exec)
{
	struct cs_map piece[3];
	size_t i, j, np = 0;

	i = first_above(m, start);
	j = i;
	while (j < m->nr && m->map[j].start < end)
		j++;
	/* maps [i, j) overlap the new one: keep the parts outside it */
	if (i < j && m->map[i].start < start) {
		piece[np] = m->map[i];
		piece[np++].end = start;
	}
	piece[np++] = (struct cs_map){ start, end, pgoff, dso, exec };
	if (i < j && m->map[j - 1].end > end) {
		struct cs_map r = m->map[j - 1];

		r.pgoff += end - r.start;
		r.start = end;
		piece[np++] = r;
	}
	if (np > j - i && reserve(m, m->nr + np - (j - i)))
		return -ENOMEM;
	memmove(&m->map[i + np], &m->map[j], (m->nr - j) * sizeof(*m->map));
	memcpy(&m->map[i], piece, np * sizeof(*piece));
	m->nr = m->nr + np - (j - i);
	m->last = i;
	return 0;
}

int cs_maps_insert(struct cs_maps *m, uint64_t start, uint64_t len,
		   uint64_t pgoff, struct cs_dso *dso, bool exec)
{
	uint64_t end = start + len, at = start;

	if (!len)
		return 0;
	if (end < start)			/* wraps: clamp to the top */
		end = UINT64_MAX;
	if (exec)
		return replace_range(m, start, end, pgoff, dso, true);
	/* a data map fills only the gaps between the code maps it overlaps */
	while (at < end) {
		size_t k = first_above(m, at);
		uint64_t stop = end;
		int err;

		if (k < m->nr && m->map[k].exec && m->map[k].start <= at) {
			at = m->map[k].end;
			continue;
		}
		for (; k < m->nr && m->map[k].start < end; k++)
			if (m->map[k].exec) {
				stop = m->map[k].start;
				break;
			}
		err = replace_range(m, at, stop, pgoff + (at - start), dso, false);
		if (err)
			return err;
		at = stop;
	}
	return 0;
}

const struct cs_map *cs_maps_find(struct cs_maps *m, uint64_t addr)
{
	size_t i;

	if (m->last < m->nr && addr >= m->map[m->last].start &&
	    addr < m->map[m->last].end)
		return &m->map[m->last];
	i = first_above(m, addr);
	if (i < m->nr && m->map[i].start <= addr) {
		m->last = i;
		return &m->map[i];
	}
	return NULL;
}

int cs_maps_copy(struct cs_maps *dst, const struct cs_maps *src)
{
	dst->nr = 0;
	if (reserve(dst, src->nr))
		return -ENOMEM;
	if (src->nr)
		memcpy(dst->map, src->map, src->nr * sizeof(*src->map));
	dst->nr = src->nr;
	dst->last = 0;
	return 0;
}

void cs_maps_clear(struct cs_maps *m)
{
	free(m->map);
	m->map = NULL;
	m->nr = m->cap = m->last = 0;
}
