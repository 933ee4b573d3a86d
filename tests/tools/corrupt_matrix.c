/* corrupt_matrix.c - the corruption matrix: one profile, damaged in every
 * way the matrix knows, each case read by the library in this process.
 *
 * Cases:
 *   truncations  at every record boundary of the data (and of a stream),
 *                and at every other 7th byte of the first 64 KiB;
 *   bit flips    in every field of the header, of each attr (and its ids'
 *                place), of the feature table and the first words of each
 *                feature section, and in the size field of every record
 *                in the first 64 KiB of data.
 * Bit flips run on the profile cut to its first --flip-bytes of records
 * (feature sections kept), so that a case costs milliseconds, not a whole
 * 3 MB profile (the whole one when the cut would split a zstd stream).
 *
 * Each case must end within 10 s (else the tool stops, naming it) with one
 * of:
 *   error    cs_session_run() or _open() fails with one line that names the
 *            file and an offset ("offset 0x..."); the samples delivered
 *            before it are the clean run's first ones;
 *   warning  one line (cs_session_warning()); the samples are the clean
 *            run's, or (a cut file) a subset of them, in the same order;
 *   clean    no word at all: allowed for a flip whose samples are the
 *            clean run's, and for a stream cut exactly between records.
 * Anything else is a broken rule: the case is printed and the exit status
 * is 1. The last line counts cases, errors, warnings and clean ones.
 *
 * Samples are compared as the canonical lines cs_canon prints (tid, time,
 * state, reason, merged chain), by hash.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <callstitch/callstitch.h>
#include "abi/perf_abi.h"

#define CASE_SECONDS	10

static const char usage[] =
"usage: corrupt_matrix [--flip-bytes N] [--jobs N] [--list] FILE\n"
"\n"
"Damages FILE (a perf.data file or a saved stream) in every way of the\n"
"corruption matrix and checks how each case is read. Prints broken rules\n"
"and, last, 'FILE: N cases: E errors, W warnings, C clean'.\n"
"\n"
"      --flip-bytes N  bit flips run on the first N bytes of records\n"
"                      (default 262144)\n"
"  -j, --jobs N        worker processes (default 2)\n"
"      --list          print each case and its outcome\n"
"  -h, --help          this text\n";

enum kind { TRUNC_RECORD, TRUNC_BYTE, FLIP_HEADER, FLIP_ATTR, FLIP_FEATURE,
	    FLIP_SIZE, NR_KINDS };
static const char *const kind_names[] = {
	"cut at a record boundary", "cut at a byte", "header bit", "attr bit",
	"feature table bit", "record size bit",
};

struct mcase {
	enum kind kind;
	uint64_t off;		/* cut length, or the byte holding the bit */
	uint8_t bit;
};

/* one profile as bytes, and where its parts are */
struct image {
	uint8_t *b;
	size_t len;
	bool pipe;
	uint64_t data_off, data_end;	/* file mode */
};

/* ---- reading one image ---- */

struct seen {
	const uint64_t *clean;		/* hashes of the clean run's samples */
	const uint64_t *clean_ids;	/* and of their (tid, time), sorted */
	size_t nr_clean;
	uint64_t *hashes, *ids;		/* this run's */
	size_t nr, cap;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

static int on_sample(void *ctx, const struct cs_stitched *s)
{
	struct seen *w = ctx;
	const struct cs_sample *smp = &s->event->sample;
	uint64_t h = 1469598103934665603ULL, id;
	uint32_t state = s->state, missing = s->missing;

	h = fnv(h, &smp->tid, sizeof(smp->tid));
	h = fnv(h, &smp->time, sizeof(smp->time));
	id = h;
	h = fnv(h, &state, sizeof(state));
	h = fnv(h, &missing, sizeof(missing));
	h = fnv(h, s->chain, s->chain_nr * sizeof(*s->chain));
	if (w->nr == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		uint64_t *n = realloc(w->hashes, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		w->hashes = n;
		n = realloc(w->ids, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->ids = n;
		w->cap = cap;
	}
	w->ids[w->nr] = id;
	w->hashes[w->nr++] = h;
	return 0;
}

enum outcome { ERROR, WARNING, CLEAN };

struct result {
	enum outcome outcome;
	char msg[512];
	struct cs_stats stats;
};

/* Reads what fd holds; r gets the outcome and the message. */
static void read_image(int fd, const char *name, struct seen *w,
		       struct result *r)
{
	static const struct cs_output_ops ops = { .sample = on_sample };
	CS_SESSION_OPTS(o, .path = name, .fd = fd, .no_debuginfod = true);
	struct cs_session *s = NULL;
	int err;

	w->nr = 0;
	memset(r, 0, sizeof(*r));
	if (lseek(fd, 0, SEEK_SET)) {
		perror("corrupt_matrix: lseek");
		exit(2);
	}
	err = cs_session_open(&o, &s);
	if (!err)
		err = cs_session_run(s, &ops, w);
	if (err) {
		r->outcome = ERROR;
		snprintf(r->msg, sizeof(r->msg), "%s",
			 s ? cs_session_error(s) : "out of memory");
	} else if (cs_session_warning(s)) {
		r->outcome = WARNING;
		snprintf(r->msg, sizeof(r->msg), "%s", cs_session_warning(s));
	} else {
		r->outcome = CLEAN;
	}
	if (s)
		r->stats = *cs_session_stats(s);
	cs_session_free(s);
}

/* ---- the image and its cases ---- */

static uint16_t ld16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t ld32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t ld64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void st64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static bool load(const char *path, struct image *im)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	memset(im, 0, sizeof(*im));
	if (!f || fstat(fileno(f), &st)) {
		perror(path);
		return false;
	}
	im->len = (size_t)st.st_size;
	im->b = malloc(im->len ? im->len : 1);
	if (!im->b || fread(im->b, 1, im->len, f) != im->len) {
		fprintf(stderr, "corrupt_matrix: %s: cannot read\n", path);
		fclose(f);
		return false;
	}
	fclose(f);
	if (im->len < 16 || ld64(im->b) != CS_PERF_MAGIC2) {
		fprintf(stderr, "corrupt_matrix: %s: not a little-endian perf.data\n",
			path);
		return false;
	}
	im->pipe = ld64(im->b + 8) == 16;
	if (!im->pipe) {
		if (im->len < 104)
			return false;
		im->data_off = ld64(im->b + 40);
		im->data_end = im->data_off + ld64(im->b + 48);
		if (im->data_end > im->len || im->data_end < im->data_off) {
			fprintf(stderr, "corrupt_matrix: %s: damaged already\n", path);
			return false;
		}
	} else {
		im->data_off = 16;
		im->data_end = im->len;
	}
	return true;
}

/* The image with only the records in its first `bytes` of data, feature
 * table and sections moved to follow them (file mode). */
static bool shrink(const struct image *in, size_t bytes, struct image *out)
{
	uint64_t end = in->data_off, nfeat = 0, table = in->data_end;
	size_t len;

	*out = *in;
	while (end + 8 <= in->data_end) {
		uint16_t size = ld16(in->b + end + 6);

		if (size < 8 || end + size - in->data_off > bytes)
			break;
		end += size;
	}
	if (in->pipe) {
		out->len = out->data_end = end;
		out->b = malloc(end);
		if (!out->b)
			return false;
		memcpy(out->b, in->b, end);
		return true;
	}
	for (int i = 0; i < 4; i++)
		nfeat += (uint64_t)__builtin_popcountll(ld64(in->b + 72 + 8 * i));
	len = end + nfeat * 16;
	for (uint64_t k = 0; k < nfeat; k++)
		len += ld64(in->b + table + 16 * k + 8);
	out->b = malloc(len);
	if (!out->b)
		return false;
	memcpy(out->b, in->b, end);
	st64(out->b + 48, end - in->data_off);
	len = end + nfeat * 16;
	for (uint64_t k = 0; k < nfeat; k++) {
		uint64_t off = ld64(in->b + table + 16 * k);
		uint64_t size = ld64(in->b + table + 16 * k + 8);

		st64(out->b + end + 16 * k, len);
		st64(out->b + end + 16 * k + 8, size);
		memcpy(out->b + len, in->b + off, size);
		len += size;
	}
	out->len = len;
	out->data_end = end;
	return true;
}

struct list {
	struct mcase *c;
	size_t nr, cap;
};

static void add(struct list *l, enum kind k, uint64_t off, int bit)
{
	if (l->nr == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->c = realloc(l->c, l->cap * sizeof(*l->c));
		if (!l->c) {
			fprintf(stderr, "corrupt_matrix: out of memory\n");
			exit(2);
		}
	}
	l->c[l->nr++] = (struct mcase){ k, off, (uint8_t)bit };
}

/* Every bit of the n-byte field at off. */
static void add_field(struct list *l, enum kind k, uint64_t off, size_t n)
{
	for (size_t bit = 0; bit < n * 8; bit++)
		add(l, k, off + bit / 8, (int)(bit % 8));
}

/* Cuts at every record boundary, then at every 7th byte of the first
 * 64 KiB that is not one (a stream cut there is a whole, shorter one). */
static void truncations(const struct image *im, struct list *l)
{
	static uint8_t boundary[65536 / 8];

	memset(boundary, 0, sizeof(boundary));
	for (uint64_t at = im->data_off; at + 8 <= im->data_end;) {
		uint16_t size = ld16(im->b + at + 6);

		add(l, TRUNC_RECORD, at, 0);
		if (at < 65536)
			boundary[at / 8] |= (uint8_t)(1u << at % 8);
		if (size < 8)
			break;
		at += size;
	}
	for (uint64_t at = 0; at < 65536 && at < im->len; at += 7)
		if (!(boundary[at / 8] >> at % 8 & 1))
			add(l, TRUNC_BYTE, at, 0);
}

static int longest_first(const void *a, const void *b)
{
	const struct mcase *x = a, *y = b;

	return x->off < y->off ? 1 : x->off > y->off ? -1 : 0;
}

static void flips(const struct image *im, struct list *l)
{
	/* header: magic, size, then (file mode) 11 u64 fields */
	add_field(l, FLIP_HEADER, 0, im->pipe ? 16 : 104);
	if (!im->pipe) {
		uint64_t esz = ld64(im->b + 16), at = ld64(im->b + 24);
		uint64_t asz = ld64(im->b + 32), table = im->data_end, nfeat = 0;

		for (uint64_t k = 0; esz && k < asz / esz; k++)
			add_field(l, FLIP_ATTR, at + k * esz, (size_t)esz);
		for (int i = 0; i < 4; i++)
			nfeat += (uint64_t)__builtin_popcountll(ld64(im->b + 72 + 8 * i));
		add_field(l, FLIP_FEATURE, table, (size_t)nfeat * 16);
		for (uint64_t k = 0; k < nfeat; k++) {
			uint64_t off = ld64(im->b + table + 16 * k);
			uint64_t size = ld64(im->b + table + 16 * k + 8);

			add_field(l, FLIP_FEATURE, off, size < 8 ? (size_t)size : 8);
		}
	}
	for (uint64_t at = im->data_off; at + 8 <= im->data_end &&
	     at - im->data_off < 65536;) {
		uint32_t type = ld32(im->b + at);
		uint16_t size = ld16(im->b + at + 6);

		add_field(l, FLIP_SIZE, at + 6, 2);
		/* a stream's attrs and features come as records */
		if (type == CS_RECORD_HEADER_ATTR && size > 8)
			add_field(l, FLIP_ATTR, at + 8, size - 8u);
		if (type == CS_RECORD_HEADER_FEATURE && size >= 24)
			add_field(l, FLIP_FEATURE, at + 8, 16);
		if (size < 8)
			break;
		at += size;
	}
}

/* ---- running cases ---- */

struct tally {
	uint64_t cases, by[3], changed_warn, broken;
	uint64_t by_kind[NR_KINDS][3];
};

static const struct mcase *current;
static const char *current_file;

static void on_alarm(int sig)
{
	char m[200];
	int n;

	(void)sig;
	n = snprintf(m, sizeof(m), "BROKEN %s: %s at %#" PRIx64 " bit %u: still "
		     "running after %d s\n", current_file,
		     kind_names[current->kind], current->off, current->bit,
		     CASE_SECONDS);
	if (write(STDOUT_FILENO, m, (size_t)n) < 0)
		_exit(3);
	_exit(3);
}

/* "offset 0x1c40", or "offset 0" (%#x prints 0 bare) */
static bool has_offset(const char *msg)
{
	const char *p = strstr(msg, "offset 0");

	if (!p)
		return false;
	if (p[8] == 'x')
		return p[9] && strchr("0123456789abcdef", p[9]);
	return !p[8] || !strchr("0123456789abcdef", p[8]);
}

static bool is_prefix(const struct seen *w)
{
	return w->nr <= w->nr_clean && (!w->nr ||
	       !memcmp(w->hashes, w->clean, w->nr * sizeof(*w->hashes)));
}

static bool same(const struct seen *w)
{
	return w->nr == w->nr_clean && is_prefix(w);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every delivered sample is one of the clean run's, by (tid, time): a cut
 * profile ends early, and the samples still waiting there come out at
 * its end without their user part, as at the end of any profile (so in
 * another order, and changed). w->ids is sorted in place. */
static bool is_subset(struct seen *w, const uint64_t *clean_sorted)
{
	size_t k = 0;

	qsort(w->ids, w->nr, sizeof(*w->ids), by_value);
	for (size_t i = 0; i < w->nr; i++) {
		while (k < w->nr_clean && clean_sorted[k] < w->ids[i])
			k++;
		if (k == w->nr_clean || clean_sorted[k++] != w->ids[i])
			return false;
	}
	return true;
}

static bool accounted(const struct cs_stats *st)
{
	uint64_t by = 0;

	for (int r = 0; r < CS_MISSING__COUNT; r++)
		by += st->kernel_only_by[r];
	return st->samples == st->stitched + st->stitched_late +
	       st->kernel_only + st->original && by == st->kernel_only;
}

/* What is wrong with this outcome, or NULL. */
static const char *judge(const struct image *im, const struct mcase *c,
			 const struct result *r, struct seen *w)
{
	bool cut = c->kind == TRUNC_RECORD || c->kind == TRUNC_BYTE;

	if (r->outcome != ERROR && !accounted(&r->stats))
		return "the samples do not add up";
	switch (r->outcome) {
	case ERROR:
		if (strchr(r->msg, '\n'))
			return "the error is more than one line";
		if (!strstr(r->msg, "corrupt.data"))
			return "the error does not name the file";
		if (!has_offset(r->msg))
			return "the error names no offset";
		/* a cut leaves everything before it intact; a damaged
		 * record is found when it is decoded, in time order, so
		 * records it swallowed may already have changed samples */
		if (cut && !is_prefix(w))
			return "samples before the error differ from the clean run's";
		return NULL;
	case WARNING:
		if (strchr(r->msg, '\n'))
			return "the warning is more than one line";
		if (cut ? !is_subset(w, w->clean_ids) : !same(w))
			return "samples differ from the clean run's beside a warning";
		return NULL;
	case CLEAN:
		if (cut && !(im->pipe && c->kind == TRUNC_RECORD))
			return "a cut file reads as whole";
		if (cut ? !is_subset(w, w->clean_ids) : !same(w))
			return "samples differ from the clean run's without a word";
		return NULL;
	}
	return NULL;
}

static int image_fd(const struct image *im)
{
	int fd = memfd_create("corrupt.data", MFD_CLOEXEC);

	if (fd < 0 || write(fd, im->b, im->len) != (ssize_t)im->len) {
		perror("corrupt_matrix: memfd");
		exit(2);
	}
	return fd;
}

/* Runs cases [worker, worker + jobs, ...) of l on im; prints broken rules. */
static void run_cases(const char *file, const struct image *im,
		      const struct list *l, struct seen *w, int worker, int jobs,
		      bool list, struct tally *t)
{
	int fd = image_fd(im);
	struct result r;

	current_file = file;
	signal(SIGALRM, on_alarm);
	setvbuf(stdout, NULL, _IOLBF, 0);	/* workers share stdout */
	for (size_t i = (size_t)worker; i < l->nr; i += (size_t)jobs) {
		const struct mcase *c = &l->c[i];
		bool cut = c->kind == TRUNC_RECORD || c->kind == TRUNC_BYTE;
		const char *why;
		uint8_t orig = 0;

		current = c;
		if (cut) {
			if (ftruncate(fd, (off_t)c->off))
				exit(2);
		} else {
			orig = im->b[c->off];
			uint8_t v = orig ^ (uint8_t)(1u << c->bit);

			if (pwrite(fd, &v, 1, (off_t)c->off) != 1)
				exit(2);
		}
		alarm(CASE_SECONDS);
		read_image(fd, "corrupt.data", w, &r);
		alarm(0);
		why = judge(im, c, &r, w);
		t->cases++;
		t->by[r.outcome]++;
		t->by_kind[c->kind][r.outcome]++;
		if (why) {
			t->broken++;
			printf("BROKEN %s: %s at %#" PRIx64 " bit %u: %s (%s%s; %zu of "
			       "%zu samples)\n", file, kind_names[c->kind], c->off,
			       c->bit, why, r.outcome == ERROR ? "error: " :
			       r.outcome == WARNING ? "warning: " : "clean",
			       r.msg, w->nr, w->nr_clean);
		} else if (list) {
			printf("%s at %#" PRIx64 " bit %u: %s%s\n", kind_names[c->kind],
			       c->off, c->bit, r.outcome == ERROR ? "error: " :
			       r.outcome == WARNING ? "warning: " : "clean", r.msg);
		}
		/* put the byte back; cuts come longest first, so the file
		 * only ever shrinks */
		if (!cut && pwrite(fd, &orig, 1, (off_t)c->off) != 1)
			exit(2);
	}
	close(fd);
}

/* The clean run of im: its samples become w->clean. */
static bool clean_run(const char *file, const struct image *im, struct seen *w)
{
	int fd = image_fd(im);
	struct result r;

	w->clean = w->clean_ids = NULL;
	w->nr_clean = 0;
	read_image(fd, file, w, &r);
	close(fd);
	if (r.outcome != CLEAN) {
		fprintf(stderr, "corrupt_matrix: %s: the undamaged profile does not "
			"read clean: %s\n", file, r.msg);
		free(w->hashes);
		free(w->ids);
		return false;
	}
	qsort(w->ids, w->nr, sizeof(*w->ids), by_value);
	w->clean = w->hashes;
	w->clean_ids = w->ids;
	w->nr_clean = w->nr;
	w->hashes = w->ids = NULL;
	w->nr = w->cap = 0;
	return true;
}

static bool reads_clean(const struct image *im)
{
	struct seen w = { 0 };
	struct result r;
	int fd = image_fd(im);

	read_image(fd, "shrunk", &w, &r);
	close(fd);
	free(w.hashes);
	free(w.ids);
	return r.outcome == CLEAN;
}

/* Forks jobs workers over l on im and adds up their tallies. */
static bool run_all(const char *file, const struct image *im,
		    const struct list *l, int jobs, bool list, struct tally *sum)
{
	struct seen w = { 0 };
	struct tally *shared;
	bool ok = true;

	if (!clean_run(file, im, &w))
		return false;
	shared = mmap(NULL, sizeof(*shared) * (size_t)jobs, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return false;
	memset(shared, 0, sizeof(*shared) * (size_t)jobs);
	fflush(stdout);
	for (int j = 0; j < jobs; j++) {
		pid_t pid = fork();

		if (pid < 0)
			return false;
		if (!pid) {
			run_cases(file, im, l, &w, j, jobs, list, &shared[j]);
			fflush(stdout);
			_exit(0);
		}
	}
	for (int j = 0; j < jobs; j++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("BROKEN %s: a worker died (%s %d)\n", file,
			       WIFSIGNALED(status) ? "signal" : "exit",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			ok = false;
		}
	}
	for (int j = 0; j < jobs; j++) {
		sum->cases += shared[j].cases;
		sum->broken += shared[j].broken;
		for (int o = 0; o < 3; o++) {
			sum->by[o] += shared[j].by[o];
			for (int k = 0; k < NR_KINDS; k++)
				sum->by_kind[k][o] += shared[j].by_kind[k][o];
		}
	}
	munmap(shared, sizeof(*shared) * (size_t)jobs);
	free((void *)w.clean);
	free((void *)w.clean_ids);
	free(w.hashes);
	free(w.ids);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "flip-bytes", required_argument, NULL, 'F' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	size_t flip_bytes = 262144;
	struct image full, small;
	struct list cuts = { 0 }, flipl = { 0 };
	struct tally t = { 0 };
	bool list = false, ok;
	const char *file;
	int jobs = 2, opt;

	while ((opt = getopt_long(argc, argv, "j:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'F': flip_bytes = strtoul(optarg, NULL, 0); break;
		case 'j': jobs = atoi(optarg); break;
		case 'l': list = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind + 1 != argc || jobs < 1 || jobs > 64) {
		fputs(usage, stderr);
		return 2;
	}
	file = strrchr(argv[optind], '/') ? strrchr(argv[optind], '/') + 1 : argv[optind];
	if (!load(argv[optind], &full) || !shrink(&full, flip_bytes, &small))
		return 2;
	truncations(&full, &cuts);
	qsort(cuts.c, cuts.nr, sizeof(*cuts.c), longest_first);
	if (!reads_clean(&small)) {	/* cut inside a zstd stream */
		free(small.b);
		small = full;
		small.b = malloc(full.len);
		if (!small.b)
			return 2;
		memcpy(small.b, full.b, full.len);
	}
	flips(&small, &flipl);
	ok = run_all(file, &full, &cuts, jobs, list, &t);
	ok &= run_all(file, &small, &flipl, jobs, list, &t);
	for (int k = 0; k < NR_KINDS; k++)
		printf("  %-26s %6" PRIu64 " errors %6" PRIu64 " warnings %6"
		       PRIu64 " clean\n", kind_names[k], t.by_kind[k][ERROR],
		       t.by_kind[k][WARNING], t.by_kind[k][CLEAN]);
	printf("%s: %" PRIu64 " cases: %" PRIu64 " errors, %" PRIu64 " warnings, %"
	       PRIu64 " clean; %" PRIu64 " broken rules\n", file, t.cases,
	       t.by[ERROR], t.by[WARNING], t.by[CLEAN], t.broken);
	free(full.b);
	free(small.b);
	free(cuts.c);
	free(flipl.c);
	return ok && !t.broken ? 0 : 1;
}
