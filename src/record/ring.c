/* ring.c - perf ring buffer reading with acquire/release ordering. */
#include "record/ring.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "abi/perf_abi.h"

#define RECORD_MAX 65536		/* header.size is a u16 */
#define RELEASE_STEP (16u << 10)	/* at most, read between tail updates */

static struct perf_event_mmap_page *ctl(const struct cs_ring *r)
{
	return r->base;
}

static int ring_setup(struct cs_ring *r, void *base, size_t page_size, size_t data_size)
{
	struct perf_event_mmap_page *pc = base;

	r->base = base;
	/* kernels since 4.1 say where the data is; older ones imply it */
	if (pc->data_size) {
		if (pc->data_offset + pc->data_size > page_size + data_size)
			return -EINVAL;
		r->data = (unsigned char *)base + pc->data_offset;
		r->size = pc->data_size;
	} else {
		r->data = (unsigned char *)base + page_size;
		r->size = data_size;
	}
	if (!r->size || (r->size & (r->size - 1)) || r->size % 8)
		return -EINVAL;
	r->bounce = malloc(RECORD_MAX);
	return r->bounce ? 0 : -ENOMEM;
}

int cs_ring_init(struct cs_ring *r, void *base, size_t page_size, size_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	return ring_setup(r, base, page_size, data_size);
}

int cs_ring_mmap(struct cs_ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *base;
	int err;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	r->map_size = (data_pages + 1) * page;
	base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		err = -errno;
		r->map_size = 0;
		return err;
	}
	err = ring_setup(r, base, page, data_pages * page);
	if (err) {
		munmap(base, r->map_size);
		r->base = NULL;
		r->map_size = 0;
	}
	return err;
}

uint64_t cs_ring_pending(const struct cs_ring *r)
{
	uint64_t head = __atomic_load_n(&ctl(r)->data_head, __ATOMIC_ACQUIRE);

	return head - ctl(r)->data_tail;
}

/* Copies len bytes starting at ring offset pos, wrapping at the end. */
static void copy_out(const struct cs_ring *r, uint64_t pos, void *dst, size_t len)
{
	uint64_t off = pos & (r->size - 1);
	size_t first = len;

	if (off + len > r->size)
		first = r->size - off;
	memcpy(dst, r->data + off, first);
	if (first < len)
		memcpy((unsigned char *)dst + first, r->data, len - first);
}

/* Publishes tail: the kernel may write over what is behind it. Our reads
 * of those records happen before. */
static void release(struct cs_ring *r, uint64_t tail)
{
	__atomic_store_n(&ctl(r)->data_tail, tail, __ATOMIC_RELEASE);
}

long cs_ring_read(struct cs_ring *r, cs_ring_fn fn, void *ctx)
{
	struct perf_event_mmap_page *pc = ctl(r);
	/* pairs with the kernel's store of data_head after the record bytes */
	uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t start = pc->data_tail, tail = start, released = start;
	uint64_t step = r->size / 4 < RELEASE_STEP ? r->size / 4 : RELEASE_STEP;
	long ret = 0;

	while (tail < head) {
		struct cs_perf_event_header h;
		uint64_t off = tail & (r->size - 1);
		const void *rec;

		copy_out(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			ret = -EBADMSG;
			break;
		}
		if (off + h.size <= r->size) {
			rec = r->data + off;
		} else {
			copy_out(r, tail, r->bounce, h.size);
			rec = r->bounce;
		}
		ret = fn(ctx, rec, h.size);
		tail += h.size;
		if (ret)
			break;
		/* room for the kernel as we go, not only at the end: the
		 * callback may block (the writer's flush) while it fills */
		if (tail - released >= step) {
			release(r, tail);
			released = tail;
		}
	}
	release(r, tail);
	if (ret)
		return ret;
	return (long)(tail - start);
}

void cs_ring_unmap(struct cs_ring *r)
{
	if (r->map_size)
		munmap(r->base, r->map_size);
	free(r->bounce);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}
