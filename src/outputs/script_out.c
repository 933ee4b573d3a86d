/* script_out.c - script's text on its way out: chunks of its own text with
 * references to cached text, gathered and written (or, to /dev/null,
 * written with writev()) on this thread or on a writer thread, and the
 * put_*() helpers that fill them. */
#include "outputs/script_int.h"
#include "lib/session/interrupt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

void script_sink_init(struct sink *s, FILE *out)
{
	struct stat st;

	s->out = out;
	/* what the stream holds goes first: from here on, the descriptor */
	s->fd = fflush(out) ? -1 : fileno(out);
	s->gather = s->fd >= 0 &&
		    !(fstat(s->fd, &st) == 0 && S_ISCHR(st.st_mode) &&
		      st.st_rdev == makedev(1, 3));	/* /dev/null */
}

/* All of n pieces: writev() may take fewer bytes than it was given (a
 * signal, a pipe, a full disk). False on an error. */
/* 0, or the errno of the failed write */
static int writev_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* 0, or the errno of the failed write (EIO when the stream has none) */
static int sink_write(const struct sink *s, struct iovec *iov, int n)
{
	if (s->fd >= 0)
		return writev_all(s->fd, iov, n);
	for (int i = 0; i < n; i++)
		if (fwrite(iov[i].iov_base, 1, iov[i].iov_len, s->out) !=
		    iov[i].iov_len)
			return errno ? errno : EIO;
	return 0;
}

/* The chunk's pieces copied into its stage, written each time it is
 * full; a piece bigger than the stage is written from where it is. 0 or
 * the errno of the failed write. */
static int chunk_gather(const struct sink *s, struct chunk *c)
{
	struct iovec out = { c->stage, 0 };
	int err = 0;

	for (size_t i = 0; i < c->nr_iov && !err; i++) {
		struct iovec *v = &c->iov[i];

		if (out.iov_len && out.iov_len + v->iov_len > STAGE_SIZE) {
			err = writev_all(s->fd, &out, 1);
			out.iov_len = 0;
			if (err)
				break;
		}
		if (v->iov_len > STAGE_SIZE) {
			err = writev_all(s->fd, v, 1);
			continue;
		}
		memcpy(c->stage + out.iov_len, v->iov_base, v->iov_len);
		out.iov_len += v->iov_len;
	}
	if (!err && out.iov_len)
		err = writev_all(s->fd, &out, 1);
	return err;
}

/* Writes the chunk, its own text and the cached text it refers to in
 * order, and empties it. Returns 0 or the errno of the failed write. */
static int chunk_write(const struct sink *s, struct chunk *c)
{
	int err = 0;

	if (c->len > c->text_from)
		c->iov[c->nr_iov++] = (struct iovec){ c->buf + c->text_from,
						      c->len - c->text_from };
	/* (without memory for the stage, the pieces go as they are) */
	if (s->gather && (c->stage || (c->stage = malloc(STAGE_SIZE))))
		err = chunk_gather(s, c);
	else
		for (size_t i = 0; i < c->nr_iov && !err; i += PIECES)
			err = sink_write(s, c->iov + i, c->nr_iov - i < PIECES ?
						     (int)(c->nr_iov - i) : PIECES);
	c->len = 0;
	c->nr_iov = 0;
	c->text_from = 0;
	return err;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct chunk *c;

	while ((c = cs_queue_pop(w->todo))) {
		int err = chunk_write(&w->sink, c);

		/* the session may be waiting on a quiet pipe: it would see
		 * this only at the next chunk, when the pipe brings more */
		if (err) {
			atomic_store(&w->failed, err);
			if (w->session)
				cs_session_interrupt(w->session);
		}
		cs_queue_push(w->done, c);
	}
	return NULL;
}

void script_out_session(struct cs_script *sc, struct cs_session *s)
{
	sc->session = s;
	if (sc->writer)
		sc->writer->session = s;
}

void script_chunk_free(struct chunk *c)
{
	free(c->buf);
	free(c->iov);
	free(c->stage);
}

int script_chunk_init(struct chunk *c)
{
	c->buf = malloc(BUF_SIZE);
	/* one more: the own text after the last reference */
	c->iov = malloc((CHUNK_IOVS + 1) * sizeof(*c->iov));
	c->stage = NULL;
	c->len = 0;
	c->nr_iov = 0;
	c->text_from = 0;
	return c->buf && c->iov ? 0 : -ENOMEM;
}

static void writer_free(struct writer *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < CHUNKS; i++)
		script_chunk_free(&w->chunks[i]);
	cs_queue_free(w->todo);
	cs_queue_free(w->done);
	free(w);
}

/* Starts the writer thread. Returns 0, or -ENOMEM, or -EAGAIN when no
 * thread could be made. */
int script_writer_start(struct cs_script *sc)
{
	struct writer *w = calloc(1, sizeof(*w));
	int err = -ENOMEM;

	if (!w || cs_queue_new(CHUNKS + 1, &w->todo) ||
	    cs_queue_new(CHUNKS, &w->done))
		goto fail;
	for (size_t i = 0; i < CHUNKS; i++) {
		if (script_chunk_init(&w->chunks[i]))
			goto fail;
		if (i)
			cs_queue_push(w->done, &w->chunks[i]);
	}
	w->sink = sc->sink;
	atomic_init(&w->failed, 0);
	if (pthread_create(&w->thread, NULL, writer_main, w)) {
		err = -EAGAIN;
		goto fail;
	}
	sc->writer = w;
	sc->filling = &w->chunks[0];
	return 0;
fail:
	writer_free(w);
	return err;
}

void script_chunk_out(struct cs_script *sc)
{
	struct writer *w = sc->writer;

	if (sc->fmt) {
		script_ops_out(sc);
		return;
	}
	sc->filling->len = sc->len;
	sc->len = 0;
	if (!w) {
		int err = chunk_write(&sc->sink, sc->filling);

		if (err)
			sc->io_error = err;
		return;
	}
	cs_queue_push(w->todo, sc->filling);
	sc->filling = cs_queue_pop(w->done);
	sc->buf = sc->filling->buf;
	take_failure(sc, &w->failed);
}

void script_out_drain(struct cs_script *sc)
{
	struct writer *w = sc->writer;

	if (sc->fmt) {
		script_ops_sync(sc);
		return;
	}
	script_chunk_out(sc);
	if (!w)
		return;
	ring_wait(w->done, CHUNKS);
	take_failure(sc, &w->failed);
}

void script_writer_stop(struct cs_script *sc)
{
	if (!sc->writer)
		return;
	cs_queue_push(sc->writer->todo, NULL);
	pthread_join(sc->writer->thread, NULL);
	writer_free(sc->writer);
	sc->writer = NULL;
	sc->filling = NULL;
	sc->buf = NULL;
}

char *script_room_slow(struct cs_script *sc, size_t n)
{
	if (!sc->fmt) {
		script_chunk_out(sc);
		return n > BUF_SIZE ? NULL : sc->buf + sc->len;
	}
	if (n > BUF_SIZE)
		return NULL;
	/* the text goes on in an OP_TEXT of its own: one is opened */
	script_text_close(sc);
	if (sc->len + 8 + n > OPS_SIZE)
		script_ops_out(sc);
	sc->text_at = sc->len;
	sc->len += 8;
	sc->room_end = OPS_SIZE;
	return sc->buf + sc->len;
}

/* The end of an OP_TEXT: the next operation starts aligned after it. */
void script_text_close(struct cs_script *sc)
{
	size_t n;

	if (sc->text_at == NO_TEXT)
		return;
	n = sc->len - sc->text_at - 8;
	if (n) {
		*(uint64_t *)(sc->buf + sc->text_at) = OP_TEXT | (uint64_t)n << 8;
		sc->len = (sc->len + 7) & ~(size_t)7;
	} else {
		sc->len = sc->text_at;
	}
	sc->text_at = NO_TEXT;
	sc->room_end = 0;
}

void script_put_mem(struct cs_script *sc, const char *s, size_t n)
{
	char *p = room(sc, n);

	if (!p && sc->fmt) {
		/* an absurd name: in pieces, each an OP_TEXT */
		for (size_t k; n; s += k, n -= k) {
			k = n < BUF_SIZE ? n : BUF_SIZE;
			memcpy(room(sc, k), s, k);
			sc->len += k;
		}
		return;
	}
	if (!p) {
		struct iovec iov = { (void *)s, n };

		int err;

		script_out_drain(sc);		/* what came before goes first */
		if ((err = sink_write(&sc->sink, &iov, 1)))
			sc->io_error = err;
		return;
	}
	memcpy(p, s, n);
	sc->len += n;
}

void script_put_str(struct cs_script *sc, const char *s)
{
	script_put_mem(sc, s, strlen(s));
}

void script_put_pad(struct cs_script *sc, int n)
{
	char *p;

	if (n <= 0)
		return;
	p = room(sc, (size_t)n);
	memset(p, ' ', (size_t)n);
	sc->len += (size_t)n;
}

/* %*s */
void script_put_str_w(struct cs_script *sc, const char *s, int width)
{
	size_t n = strlen(s);

	if ((int)n < width)
		script_put_pad(sc, width - (int)n);
	script_put_mem(sc, s, n);
}

static size_t fmt_hex(char *tmp, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0;

	do {
		tmp[n++] = hex[v & 15];
		v >>= 4;
	} while (v);
	return n;			/* reversed */
}

size_t script_fmt_dec(char *tmp, uint64_t v)
{
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return n;			/* reversed */
}

void script_put_rev(struct cs_script *sc, const char *tmp, size_t n, int width,
		    char padc)
{
	char *p = room(sc, n + (width > 0 ? (size_t)width : 0));

	for (int k = (int)n; k < width; k++)
		*p++ = padc, sc->len++;
	for (size_t k = n; k-- > 0;)
		*p++ = tmp[k];
	sc->len += n;
}

void script_put_hex_w(struct cs_script *sc, uint64_t v, int width)
{
	char tmp[16];

	script_put_rev(sc, tmp, fmt_hex(tmp, v), width, ' ');
}

void script_put_dec_w(struct cs_script *sc, uint64_t v, int width, char padc)
{
	char tmp[20];

	script_put_rev(sc, tmp, script_fmt_dec(tmp, v), width, padc);
}

void script_put_int_w(struct cs_script *sc, int32_t v, int width)
{
	char tmp[21];
	size_t n;

	if (v >= 0) {
		script_put_dec_w(sc, (uint64_t)v, width, ' ');
		return;
	}
	n = script_fmt_dec(tmp, (uint64_t)(-(int64_t)v));
	tmp[n++] = '-';
	script_put_rev(sc, tmp, n, width, ' ');
}
