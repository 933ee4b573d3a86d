/* script_head.c - a sample's first line ("comm tid [cpu] time: period
 * event: "), made from the fields perf script shows, with what the last
 * sample on the same CPU made kept. */
#include "outputs/script_int.h"

/* The decimal digits of v, ending at end; returns where they start. Two
 * at a time: every sample's first line has five or six numbers. */
static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

static char *digits_before(char *end, uint64_t v)
{
	const char *pairs = digit_pairs;

	while (v >= 100) {
		end -= 2;
		memcpy(end, pairs + v % 100 * 2, 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + v * 2, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

/* %*lu (pad ' ') or %0*lu (pad '0') */
static char *dec_to(char *p, uint64_t v, int width, char pad)
{
	char tmp[21], *q = digits_before(tmp + 21, v);
	int n = (int)(tmp + 21 - q);

	for (; width > n; width--)
		*p++ = pad;
	memcpy(p, q, (size_t)n);
	return p + n;
}

/* %*d */
static char *int_to(char *p, int32_t v, int width)
{
	char tmp[21], *q;
	int n;

	q = digits_before(tmp + 21, v < 0 ? (uint64_t)(-(int64_t)v) : (uint64_t)v);
	if (v < 0)
		*--q = '-';
	n = (int)(tmp + 21 - q);
	for (; width > n; width--)
		*p++ = ' ';
	memcpy(p, q, (size_t)n);
	return p + n;
}

/* Whether h holds the head of a sample of e by pid/tid on cpu. */
static bool head_holds(const struct head_prefix *h, const struct cs_evsel *e,
		       const struct sample_head *sh, const char *comm,
		       unsigned int fields)
{
	return h->used && h->e == e && h->comm == comm && h->pid == sh->pid &&
	       h->tid == sh->tid && h->cpu == sh->cpu && h->fields == fields;
}

/* A sample's first line up to its time (comm, pid and tid, CPU) into h,
 * and its event name's length; false when the comm is too long for h. */
static bool head_make(struct cs_script *sc, struct head_prefix *h,
		      const struct cs_evsel *e, const struct sample_head *sh,
		      const char *comm)
{
	uint64_t st = sample_type_of(e);
	unsigned int f = sc->fields;
	size_t comm_len = comm ? strlen(comm) : 0;
	char *p = h->text;

	h->used = false;
	/* the rest is at most 16 + 1 + 23 (pid/tid) + 13 (cpu) bytes */
	if (comm_len > HEAD_TEXT - 56)
		return false;
	if (comm) {
		/* perf pads the name only when no stack lines follow */
		if (!((f & CS_SCRIPT_IP) && (st & CS_SAMPLE_CALLCHAIN)))
			for (size_t k = comm_len; k < 16; k++)
				*p++ = ' ';
		p = cpy(p, comm, comm_len);
		*p++ = ' ';
	}
	if (st & CS_SAMPLE_TID) {
		if ((f & CS_SCRIPT_PID) && (f & CS_SCRIPT_TID)) {
			char *t;

			p = int_to(p, (int32_t)sh->pid, 7);
			*p++ = '/';
			/* %-7d of the tid as unsigned */
			t = p;
			p = dec_to(p, sh->tid, 0, ' ');
			while (p - t < 7)
				*p++ = ' ';
			*p++ = ' ';
		} else if (f & (CS_SCRIPT_PID | CS_SCRIPT_TID)) {
			p = int_to(p, (int32_t)(f & CS_SCRIPT_PID ? sh->pid :
						sh->tid), 7);
			*p++ = ' ';
		}
	}
	if ((st & CS_SAMPLE_CPU) && (f & CS_SCRIPT_CPU)) {
		*p++ = '[';
		p = dec_to(p, sh->cpu, 3, '0');
		*p++ = ']';
		*p++ = ' ';
	}
	h->len = (size_t)(p - h->text);
	h->tail_made = false;
	h->e = e;
	h->comm = comm;
	h->pid = sh->pid;
	h->tid = sh->tid;
	h->cpu = sh->cpu;
	h->fields = f;
	h->used = true;
	return true;
}

/* What follows the time in h's line for a sample of the given period:
 * "%10lu " of the period, the event's name right-aligned in the widest's
 * and ": " (the fields that are shown). False when that is too long to
 * keep (a name of HEAD_TAIL bytes or so). */
static bool tail_make(const struct cs_script *sc, struct head_prefix *h,
		      const struct cs_evsel *e, uint64_t period)
{
	const char *name = e && e->name ? e->name : "[unknown]";
	size_t name_len = h->fields & CS_SCRIPT_EVENT ? strlen(name) : 0;
	size_t width = sc->name_width > 0 ? (size_t)sc->name_width : 0;
	char *p = h->tail;

	h->tail_made = false;
	/* the period is at most 21 bytes with its blank */
	if (name_len > HEAD_TAIL - 24 || width > HEAD_TAIL - 24)
		return false;
	if ((sample_type_of(e) & CS_SAMPLE_PERIOD) &&
	    (h->fields & CS_SCRIPT_PERIOD)) {
		p = dec_to(p, period, 10, ' ');
		*p++ = ' ';
	}
	if (h->fields & CS_SCRIPT_EVENT) {
		for (size_t k = name_len; k < width; k++)
			*p++ = ' ';
		p = cpy(p, name, name_len);
		*p++ = ':';
		*p++ = ' ';
	}
	h->tail_len = (size_t)(p - h->tail);
	h->tail_period = period;
	h->tail_made = true;
	return true;
}

/* "%lu.%06lu" of a time in ns, right-aligned in 12, and ": ". The
 * seconds change once in thousands of samples: their text is kept, with
 * the blanks before it and the point after it. p has room for 32 more. */
static inline char *time_to(struct cs_script *sc, char *p, uint64_t time)
{
	uint64_t sec = time / 1000000000ULL;
	uint32_t us = (uint32_t)((time - sec * 1000000000ULL) / 1000);

	if (!sc->sec_len || sec != sc->sec) {
		char tmp[24], *q = digits_before(tmp + sizeof(tmp), sec);
		size_t n = (size_t)(tmp + sizeof(tmp) - q), pad = n < 5 ? 5 - n : 0;

		memset(sc->sec_text, ' ', pad);
		memcpy(sc->sec_text + pad, q, n);
		sc->sec_text[pad + n] = '.';
		sc->sec = sec;
		sc->sec_len = pad + n + 1;
	}
	p = cpy32(p, sc->sec_text, sc->sec_len);
	memcpy(p, digit_pairs + us / 10000 * 2, 2);
	memcpy(p + 2, digit_pairs + us / 100 % 100 * 2, 2);
	memcpy(p + 4, digit_pairs + us % 100 * 2, 2);
	memcpy(p + 6, ": ", 2);
	return p + 8;
}

/* A sample's first line up to the stack, as script_put_start() and the period
 * and event fields write it, in one go; false when its names are too long
 * for that (the caller then writes it piecewise). What comes before the
 * time and after it is kept by CPU (head_make(), tail_make()): a CPU's
 * samples come mostly from one thread at a time, of one event and period. */
static bool put_head(struct cs_script *sc, const struct cs_evsel *e,
		     const struct sample_head *sh, const char *comm)
{
	unsigned int f = sc->fields;
	struct head_prefix *h = &sc->heads[sh->cpu % HEADS];
	char *p, *start;

	if (!(f & CS_SCRIPT_COMM))
		comm = NULL;
	else if (!comm)
		return false;		/* ":TID": the rare way */
	if (!head_holds(h, e, sh, comm, f) && !head_make(sc, h, e, sh, comm))
		return false;
	if ((!h->tail_made || h->tail_period != sh->period) &&
	    !tail_make(sc, h, e, sh->period))
		return false;
	/* the prefix, the time (at most 32 with its copy's slack), the tail */
	if (!(p = room(sc, HEAD_TEXT + 32 + HEAD_TAIL)))
		return false;
	start = p;
	p = cpy32(p, h->text, h->len);
	if ((sample_type_of(e) & CS_SAMPLE_TIME) && (f & CS_SCRIPT_TIME))
		p = time_to(sc, p, sh->time);
	p = cpy64(p, h->tail, h->tail_len);
	sc->len += (size_t)(p - start);
	return true;
}

/* A sample's first line up to the stack (or its tracepoint fields). */
void script_put_sample_head(struct cs_script *sc, const struct cs_evsel *e,
			    const struct sample_head *sh, const char *comm)
{
	if (put_head(sc, e, sh, comm))
		return;
	script_put_start(sc, e, comm, sh->pid, sh->tid, sh->cpu, sh->time);
	if ((sample_type_of(e) & CS_SAMPLE_PERIOD) &&
	    (sc->fields & CS_SCRIPT_PERIOD)) {
		script_put_dec_w(sc, sh->period, 10, ' ');
		put_ch(sc, ' ');
	}
	if (sc->fields & CS_SCRIPT_EVENT) {
		script_put_str_w(sc, e && e->name ? e->name : "[unknown]",
			  sc->name_width);
		script_put_mem(sc, ": ", 2);
	}
}

/* script_put_sample_head() on the formatting thread */
void script_put_head_op(struct cs_script *sc, const struct cs_evsel *e,
			const struct sample_head *sh, const char *comm)
{
	struct head_op *h = op_room(sc, sizeof(*h));

	*h = (struct head_op){
		.word = OP_HEAD | (uint64_t)sc->fields << 8,
		.e = e, .comm = comm,
		.pid = sh->pid, .tid = sh->tid, .cpu = sh->cpu,
		.time = sh->time, .period = sh->period,
	};
	sc->len += sizeof(*h);
}

/* comm, tid, [cpu], time: the part every line kind shares; comm is the
 * thread's at that time (the caller's cs_machine_comm_at()), NULL for one
 * perf would not know */
void script_put_start(struct cs_script *sc, const struct cs_evsel *e,
		      const char *comm, uint32_t pid, uint32_t tid, uint32_t cpu,
		      uint64_t time)
{
	uint64_t st = sample_type_of(e);
	unsigned int f = sc->fields;

	if (f & CS_SCRIPT_COMM) {
		char unknown[16];

		if (!comm) {
			/* perf names a thread it never saw after its tid */
			snprintf(unknown, sizeof(unknown), ":%d", (int32_t)tid);
			comm = unknown;
		}
		/* perf pads the name only when no stack lines follow */
		if ((f & CS_SCRIPT_IP) && (st & CS_SAMPLE_CALLCHAIN))
			script_put_str(sc, comm);
		else
			script_put_str_w(sc, comm, 16);
		put_ch(sc, ' ');
	}
	if (st & CS_SAMPLE_TID) {
		if ((f & CS_SCRIPT_PID) && (f & CS_SCRIPT_TID)) {
			char tmp[21];
			size_t n;

			script_put_int_w(sc, (int32_t)pid, 7);
			put_ch(sc, '/');
			/* %-7d */
			n = script_fmt_dec(tmp, (uint32_t)tid);
			script_put_rev(sc, tmp, n, 0, ' ');
			script_put_pad(sc, 7 - (int)n);
			put_ch(sc, ' ');
		} else if (f & (CS_SCRIPT_PID | CS_SCRIPT_TID)) {
			script_put_int_w(sc, (int32_t)(f & CS_SCRIPT_PID ? pid : tid), 7);
			put_ch(sc, ' ');
		}
	}
	if ((st & CS_SAMPLE_CPU) && (f & CS_SCRIPT_CPU)) {
		put_ch(sc, '[');
		script_put_dec_w(sc, cpu, 3, '0');
		script_put_mem(sc, "] ", 2);
	}
	if ((st & CS_SAMPLE_TIME) && (f & CS_SCRIPT_TIME)) {
		char tmp[40];
		size_t n = 0;
		uint64_t us = time % 1000000000ULL / 1000;

		/* "%lu.%06lu" right-aligned in 12 */
		for (int k = 0; k < 6; k++, us /= 10)
			tmp[n++] = (char)('0' + us % 10);
		tmp[n++] = '.';
		n += script_fmt_dec(tmp + n, time / 1000000000ULL);
		script_put_rev(sc, tmp, n, 12, ' ');
		script_put_mem(sc, ": ", 2);
	}
}
