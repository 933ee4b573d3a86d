/* ring.h - reads one perf_event ring buffer (the mmap of a perf event).
 *
 * The kernel writes records and advances data_head; we read up to the head
 * we loaded with acquire ordering, hand each whole record to a callback and
 * then publish data_tail with release ordering, so the kernel never reuses
 * bytes we are still reading. A record that straddles the end of the ring
 * is copied into a private buffer first: callbacks always see whole,
 * contiguous, 8-byte aligned records.
 */
#ifndef CS_REC_RING_H
#define CS_REC_RING_H

#include <stddef.h>
#include <stdint.h>

struct cs_ring {
	void *base;			/* control page, then the data */
	size_t map_size;		/* munmap length; 0 if not ours */
	unsigned char *data;
	uint64_t size;			/* data bytes, a power of two */
	uint64_t *bounce;		/* one record, for wrap-around */
	int fd;
};

/* Maps fd's ring: one control page and data_pages (a power of two) pages.
 * Returns 0 or a negative errno. */
int cs_ring_mmap(struct cs_ring *r, int fd, size_t data_pages);

/* Uses memory laid out like a perf ring (a control page of page_size bytes,
 * then data_size bytes, a power of two): for tests. Not unmapped. */
int cs_ring_init(struct cs_ring *r, void *base, size_t page_size,
		 size_t data_size);

/* Called for each record: rec is valid only during the call. A non-zero
 * return stops the read and is returned. */
typedef int (*cs_ring_fn)(void *ctx, const void *rec, size_t size);

/* Reads every complete record now in the ring, giving the room read back
 * to the kernel as it goes (fn may block: the writer's flush). Returns the number of bytes consumed (>= 0),
 * what fn returned when it stopped the read, or -EBADMSG if the ring
 * holds a record header that cannot be right (size < 8 or beyond the
 * head). Records handed to fn before a stop are consumed. */
long cs_ring_read(struct cs_ring *r, cs_ring_fn fn, void *ctx);

/* Bytes waiting to be read. */
uint64_t cs_ring_pending(const struct cs_ring *r);

void cs_ring_unmap(struct cs_ring *r);

#endif
