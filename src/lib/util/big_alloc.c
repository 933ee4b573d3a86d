/* big_alloc.c - large tables on transparent huge pages (see big_alloc.h).
 *
 * Under AddressSanitizer every block is malloc()'s: ASan's red zones
 * catch a write past a heap block and its quarantine a use after free,
 * where a mapping's slack (up to 2 MiB past the end) would take the
 * write silently and a freed mapping's address may be mapped again; and
 * LeakSanitizer does not look inside mappings for pointers, so strings
 * held only by a mapped table would be reported as leaks. The mapped
 * path is tested by tests/unit/test_big_alloc.c in the ThreadSanitizer
 * build, which maps as the release build does.
 */
#include "big_alloc.h"
#include "grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define BIG_MAPS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_MAPS 0
#endif
#endif
#ifndef BIG_MAPS
#define BIG_MAPS 1
#endif

#define HUGE_PAGE ((size_t)2 << 20)

/* Before the caller's bytes; 64 bytes keep them aligned for any type and
 * on a cache line of their own in a mapping. */
struct big_head {
	size_t size;		/* the caller's bytes */
	size_t map_len;		/* the mapping's length; 0: malloc()'s */
	size_t dirty;		/* a mapping's bytes past the header that
				 * may not be zero: the most handed out */
	char pad[64 - 3 * sizeof(size_t)];
};
_Static_assert(sizeof(struct big_head) == 64, "header keeps alignment");

static struct big_head *head_of(const void *p)
{
	return (struct big_head *)((char *)p - sizeof(struct big_head));
}

/* The mapping for size caller's bytes, whole huge pages; 0 if it would
 * overflow. */
static size_t map_len_for(size_t size)
{
	if (size > SIZE_MAX - sizeof(struct big_head) - HUGE_PAGE)
		return 0;
	return (size + sizeof(struct big_head) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

/* len bytes (a multiple of HUGE_PAGE) at a HUGE_PAGE boundary, advised for
 * huge pages before anything touches them; NULL when out of memory. The
 * kernel aligns only some lengths by itself, so one huge page more is
 * mapped and the ends cut off. */
static void *map_aligned(size_t len)
{
	size_t extra = HUGE_PAGE, lead;
	char *m = mmap(NULL, len + extra, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return NULL;
	lead = (HUGE_PAGE - ((uintptr_t)m & (HUGE_PAGE - 1))) & (HUGE_PAGE - 1);
	if (lead)
		munmap(m, lead);
	if (extra - lead)
		munmap(m + lead + len, extra - lead);
	/* no huge pages (a kernel without THP) is slower, not wrong */
	madvise(m + lead, len, MADV_HUGEPAGE);
	return m + lead;
}

static void *new_mapped(size_t size)
{
	size_t len = map_len_for(size);
	struct big_head *h = len ? map_aligned(len) : NULL;

	if (!h)
		return NULL;
	h->size = size;
	h->map_len = len;
	h->dirty = size;
	return h + 1;
}

static bool wants_map(size_t size)
{
	return BIG_MAPS && size >= CS_BIG_MIN - sizeof(struct big_head);
}

void *cs_big_alloc(size_t size)
{
	struct big_head *h;

	if (wants_map(size))
		return new_mapped(size);
	if (size > SIZE_MAX - sizeof(*h) || !(h = malloc(sizeof(*h) + size)))
		return NULL;
	h->size = size;
	h->map_len = 0;
	h->dirty = 0;
	return h + 1;
}

void *cs_big_calloc(size_t nr, size_t elem)
{
	void *p;

	if (elem && nr > SIZE_MAX / elem)
		return NULL;
	p = cs_big_alloc(nr * elem);
	/* a new mapping is zero already: writing it would fault it all in */
	if (p && !head_of(p)->map_len)
		memset(p, 0, nr * elem);
	return p;
}

/* A mapping resized to len bytes: in place if the pages after it are
 * free, else its pages moved (not copied) to the start of a new aligned
 * mapping. NULL when out of memory; then h is unchanged. */
static struct big_head *remap(struct big_head *h, size_t len)
{
	void *m;

	if (len < h->map_len) {
		munmap((char *)h + len, h->map_len - len);
		return h;
	}
	m = mremap(h, h->map_len, len, 0);
	if (m != MAP_FAILED)
		return m;
	if (!(m = map_aligned(len)))
		return NULL;
	if (mremap(h, h->map_len, h->map_len, MREMAP_MAYMOVE | MREMAP_FIXED,
		   m) == MAP_FAILED) {
		munmap(m, len);
		return NULL;
	}
	return m;
}

static void *realloc_mapped(struct big_head *h, size_t size, bool zero)
{
	size_t len = map_len_for(size), old = h->size;

	if (!len)
		return NULL;
	if (len != h->map_len) {
		if (!(h = remap(h, len)))
			return NULL;
		h->map_len = len;
		if (h->dirty > len - sizeof(*h))
			h->dirty = len - sizeof(*h);
	}
	/* only bytes once handed out can be other than zero */
	if (zero && size > old && h->dirty > old)
		memset((char *)(h + 1) + old, 0,
		       (h->dirty < size ? h->dirty : size) - old);
	if (h->dirty < size)
		h->dirty = size;
	h->size = size;
	return h + 1;
}

void *cs_big_realloc(void *p, size_t size, bool zero)
{
	struct big_head *h, *n;
	size_t old;
	void *q;

	if (!p)
		return zero ? cs_big_calloc(size, 1) : cs_big_alloc(size);
	h = head_of(p);
	old = h->size;
	if (h->map_len)
		return realloc_mapped(h, size, zero);
	if (wants_map(size)) {
		/* from the heap to a mapping: the one copy, of a small block */
		if (!(q = new_mapped(size)))
			return NULL;
		memcpy(q, p, old);
		free(h);
		return q;
	}
	if (size > SIZE_MAX - sizeof(*h) || !(n = realloc(h, sizeof(*h) + size)))
		return NULL;
	if (zero && size > old)
		memset((char *)(n + 1) + old, 0, size - old);
	n->size = size;
	return n + 1;
}

void cs_big_free(void *p)
{
	struct big_head *h;

	if (!p)
		return;
	h = head_of(p);
	if (h->map_len)
		munmap(h, h->map_len);
	else
		free(h);
}

bool cs_big_is_mapped(const void *p)
{
	return head_of(p)->map_len != 0;
}

int cs_big_grow_realloc(void **arr, size_t *cap, size_t need, size_t elem,
			bool zero)
{
	size_t n;
	void *p;

	if (cs_grow_cap(*cap, need, elem, &n))
		return -ENOMEM;
	if (n <= *cap)
		return 0;
	p = cs_big_realloc(*arr, n * elem, zero);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}
