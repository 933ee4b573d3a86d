/* gen_synth.c - synthetic perf.data with deferred user callchains, and the
 * exact stitched result expected from it.
 *
 * A small model of what the kernel does (SPEC.md §1), run on a simulated
 * clock: tasks on N CPUs enter the kernel (system calls, interrupts of user
 * code), take samples there whose user part is deferred to one record per
 * kernel entry (same cookie), migrate, return to user space on another CPU,
 * exit in the kernel or are still there when the recording stops. Records
 * go to per-CPU buffers (each in time order) that are written out in
 * chunks bounded by FINISHED_ROUND, the way perf record drains its ring
 * buffers, so the file is not in global time order. Faults: LOST records
 * that swallow deferred records, unwinds that silently produce nothing,
 * duplicate records (a second defer_output event), orphan records, late
 * samples (after their entry's record), exit-path and kernel-thread samples
 * with ordinary chains.
 *
 * --expect FILE gets one line per sample, in the format cs_canon prints:
 *
 *     TID TIME STATE REASON CHAIN
 *
 * STATE is stitched, late, kernel-only or original; REASON is lost,
 * superseded, exited or end for kernel-only and "-" otherwise; CHAIN is
 * the merged callchain in hex, comma separated ("-" when empty). Sample
 * times are unique, so `sort` makes the two comparable. The summary line on
 * stdout counts what cs_canon --stats counts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/perf_abi.h"
#include "lib/util/errbuf.h"
#include "lib/write/encode.h"
#include "lib/write/writer.h"

#include "canon_hex.h"

#define MAXK 10			/* kernel ips of a sample (marker excluded) */
#define MAXU 12			/* user ips of a stack */
#define NR_KTHREADS 2
#define ROUND_NS 2000000ULL	/* one FINISHED_ROUND per 2 ms of the clock */
#define KERNEL_TEXT 0xffffffff81000000ULL
#define EXE_BASE 0x555555554000ULL
#define LIBC_BASE 0x7f0000000000ULL
/* the made-up kernel's functions (--kallsyms): KFUNCS of KFUNC_SIZE bytes
 * from KFUNC_BASE, covering every address kernel_chain() draws */
#define KFUNC_BASE (KERNEL_TEXT + 0x10000)
#define KFUNC_SIZE 0x1000ULL
#define KFUNCS 0xff1u
/* --paths: functions user frames are call sites in */
#define EXE_FUNCS 200u
#define LIBC_FUNCS 600u
#define PROGRAMS 8u		/* process names */
#define MAX_PATHS 1000000u

static const char usage[] =
"usage: gen_synth [options]\n"
"\n"
"Writes a synthetic perf.data whose samples have deferred user callchains,\n"
"with every fault the stitcher must handle, and the exact stitched result.\n"
"\n"
"  -o, --output FILE     perf.data to write (default perf.data; - = stdout)\n"
"      --expect FILE     write the expected stitched samples, one per line\n"
"  -n, --samples N       number of samples (default 100000)\n"
"  -C, --cpus N          CPUs (default 4)\n"
"  -t, --tasks N         user tasks alive at once (default 16)\n"
"  -s, --seed N          random seed (default 1); same seed, same file\n"
"      --big-endian      write the file in big-endian byte order\n"
"      --pipe            pipe mode (as perf record -o -)\n"
"  -z, --compress[=N]    zstd-compress the data (level N, default 1)\n"
"      --no-defer        ordinary callchains only, no type-22 records\n"
"                        (a file that perf 6.1 reads)\n"
"      --short-entries   kernel entries of one or two samples, as real\n"
"                        recordings have (a task is back in user space after\n"
"                        a sample or two): about 40% of the records are\n"
"                        deferred ones, where the default's long system\n"
"                        calls make it about 7%\n"
"      --paths N         draw stacks from N call paths, hot ones far more\n"
"                        often, as a program's are (default: every stack\n"
"                        at random, nearly all distinct)\n"
"      --kallsyms FILE   write the kernel's symbols, /proc/kallsyms format\n"
"  -h, --help            this text\n";

/* ---- random numbers: splitmix64, deterministic for a seed ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static uint64_t between(uint64_t lo, uint64_t hi)
{
	return lo + rnd() % (hi - lo + 1);
}

/* true with probability per/1000 */
static bool chance(unsigned int per_mille)
{
	return rnd() % 1000 < per_mille;
}

/* ---- options ---- */

struct opts {
	const char *output;
	const char *expect;
	uint64_t samples;
	unsigned int cpus;
	unsigned int tasks;
	uint64_t seed;
	uint32_t paths;		/* 0: every stack at random */
	const char *kallsyms;
	bool big_endian, pipe, no_defer, short_entries;
	int zstd;
};

/* ---- output: per-CPU buffers drained in rounds ---- */

struct cpubuf {
	uint8_t *b;
	size_t len, cap;
	struct { uint64_t time; size_t off; } *idx;
	size_t n, cap_n;
};

struct counts {
	uint64_t samples, deferred_samples, stitched, late, kernel_only;
	uint64_t by[CS_MISSING__COUNT];
	uint64_t original, deferred_records, duplicates, orphans, lost_events;
};

static struct {
	struct opts o;
	struct cs_writer *w;
	struct cpubuf *cpu;
	uint64_t round_end;		/* next cut of the clock */
	FILE *expect;
	struct cs_perf_attr sattr, dattr;	/* sampling event, side-band dummy */
	uint64_t now;
	uint64_t lost_seq;		/* LOST records so far */
	struct counts c;
	uint8_t rec[8192];
} g;

static void die(const char *what)
{
	fprintf(stderr, "gen_synth: %s\n", what);
	exit(1);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

static void check_writer(int err)
{
	if (err) {
		fprintf(stderr, "gen_synth: %s\n", cs_writer_error(g.w));
		exit(1);
	}
}

/* Queues one encoded record (in g.rec) in a CPU's buffer. */
static void put(unsigned int cpu, uint64_t time, long n)
{
	struct cpubuf *b = &g.cpu[cpu];

	if (n < 0)
		die("a record could not be encoded");
	if (b->len + (size_t)n > b->cap) {
		b->cap = (b->cap + (size_t)n) * 2;
		b->b = xrealloc(b->b, b->cap);
	}
	if (b->n == b->cap_n) {
		b->cap_n = b->cap_n ? 2 * b->cap_n : 1024;
		b->idx = xrealloc(b->idx, b->cap_n * sizeof(*b->idx));
	}
	b->idx[b->n].time = time;
	b->idx[b->n].off = b->len;
	b->n++;
	memcpy(b->b + b->len, g.rec, (size_t)n);
	b->len += (size_t)n;
}

/* Writes what each CPU holds from before its cut, then a FINISHED_ROUND.
 * The cuts differ per CPU (perf reads the rings one after the other), by
 * less than a round, which keeps perf's bound: nothing in a round is older
 * than what the round before the previous one held. */
static void drain(bool all)
{
	for (unsigned int c = 0; c < g.o.cpus; c++) {
		struct cpubuf *b = &g.cpu[c];
		uint64_t cut = all ? UINT64_MAX : g.round_end - ROUND_NS +
			       between(0, ROUND_NS - 1);
		size_t k = 0, bytes;

		while (k < b->n && b->idx[k].time < cut)
			k++;
		if (!k)
			continue;
		bytes = k < b->n ? b->idx[k].off : b->len;
		for (size_t i = 0; i < k; i++) {
			size_t end = i + 1 < b->n ? b->idx[i + 1].off : b->len;

			check_writer(cs_writer_write(g.w, b->b + b->idx[i].off,
						     end - b->idx[i].off));
		}
		memmove(b->b, b->b + bytes, b->len - bytes);
		b->len -= bytes;
		for (size_t i = k; i < b->n; i++) {
			b->idx[i - k].time = b->idx[i].time;
			b->idx[i - k].off = b->idx[i].off - bytes;
		}
		b->n -= k;
	}
	check_writer(cs_writer_finished_round(g.w));
}

/* Advances the simulated clock; every event gets a time of its own. */
static uint64_t tick(void)
{
	g.now += between(300, 3000);
	/* a round is written once every CPU's cut lies in the past */
	while (g.now >= g.round_end + ROUND_NS) {
		drain(false);
		g.round_end += ROUND_NS;
	}
	return g.now;
}

/* ---- expected output ---- */

static void expect_line(uint32_t tid, uint64_t time, const char *state,
			const char *reason, const uint64_t *k, unsigned int nk,
			const uint64_t *u, unsigned int nu, bool user_marker)
{
	char line[64 + 17 * (2 + MAXK + MAXU)];
	size_t n;
	bool first = true;

	if (!g.expect)
		return;
	n = (size_t)snprintf(line, 64, "%u %" PRIu64 " %s %s ", tid, time, state,
			     reason);
	/* kernel part: marker + ips */
	if (nk) {
		n += canon_put_hex(line + n, CS_CONTEXT_KERNEL);
		first = false;
		for (unsigned int i = 0; i < nk; i++) {
			line[n++] = ',';
			n += canon_put_hex(line + n, k[i]);
		}
	}
	if (user_marker) {
		if (!first)
			line[n++] = ',';
		n += canon_put_hex(line + n, CS_CONTEXT_USER);
		first = false;
		for (unsigned int i = 0; i < nu; i++) {
			line[n++] = ',';
			n += canon_put_hex(line + n, u[i]);
		}
	}
	if (first)
		line[n++] = '-';
	line[n++] = '\n';
	if (fwrite(line, 1, n, g.expect) != n)
		die("cannot write the expect file");
}

/* ---- the model ---- */

enum fate {
	FATE_RECORD,		/* the record is written */
	FATE_LOST,		/* swallowed: a LOST record says so */
	FATE_NOTHING,		/* the unwind produced nothing, silently */
	FATE_EXIT,		/* the task exits in the kernel */
};

struct ksample {
	uint64_t time;
	uint8_t nk;
	uint64_t k[MAXK];
};

struct task {
	uint32_t pid, tid, ppid, ptid;
	unsigned int cpu;
	bool alive;
	/* the current kernel entry */
	bool in_kernel;
	uint64_t cookie, last_cookie;
	unsigned int left;		/* samples before it returns */
	unsigned int late, exit_path;	/* samples after its record */
	bool record_seen;		/* its record was written */
	bool user_mode_entry;		/* an interrupt of user code */
	uint64_t u[MAXU];
	unsigned int nu;
	uint32_t path;			/* --paths: the one u is of */
	unsigned int program;		/* --paths: what its process runs */
	/* samples whose record did not come, waiting for their fate */
	struct ksample *wait;
	size_t nwait, cap_wait;
	uint64_t wait_cookie;		/* the entry they belong to */
	uint64_t wait_lost_seq;		/* LOST records seen when they began */
};

static struct task *tasks;
static size_t nr_tasks, cap_tasks;
static size_t *live;		/* indices of the tasks alive, --tasks of them */
static uint32_t next_pid = 1000;

/* The events' ids, one per CPU: the sampling event's from 100, the
 * side-band (dummy) event's after them - from 200 up to 100 CPUs, as
 * the files the tests keep were made, and from 100 + cpus above, so that
 * the two never meet */
static uint64_t sampling_id(unsigned int cpu)
{
	return 100 + (uint64_t)cpu;
}

static uint64_t side_id(unsigned int cpu)
{
	return 100 + (uint64_t)(g.o.cpus > 100 ? g.o.cpus : 100) + cpu;
}

static struct cs_sample_id sid(uint32_t pid, uint32_t tid, uint64_t time,
			       unsigned int cpu, bool sampling)
{
	struct cs_sample_id id = {
		.pid = pid, .tid = tid, .time = time, .cpu = cpu,
		.id = sampling ? sampling_id(cpu) : side_id(cpu),
	};

	return id;
}

/* ---- --paths: a program's bounded set of call paths ---- */

struct call_path {
	uint8_t nk, nu;
	uint64_t k[MAXK];	/* innermost first, as in a chain */
	uint64_t u[MAXU];
};

static struct {
	struct call_path *p;
	uint64_t *cum;		/* cumulative weights, for draw_path() */
	uint64_t libc_func[LIBC_FUNCS];
} paths;

static uint64_t kfunc_start(unsigned int f)
{
	return KFUNC_BASE + f * KFUNC_SIZE;
}

/* A call site in a function of the binary: frames j from the outermost
 * (main's side) are the executable's for j < 3, libc's further in; the
 * kernel's outermost frame is one of four entry points. */
static uint64_t user_site(unsigned int j)
{
	if (j < 3)
		return EXE_BASE + 0x1000 + between(0, EXE_FUNCS - 1) * 0x100 +
		       between(1, 0x3f) * 4;
	return paths.libc_func[between(0, LIBC_FUNCS - 1)] + between(0, 15) * 4;
}

static uint64_t kernel_site(unsigned int j)
{
	unsigned int f = j ? (unsigned int)between(4, KFUNCS - 1) :
		       (unsigned int)between(0, 3);

	return kfunc_start(f) + between(1, 0xff) * 0x10;
}

/* Fills n frames (innermost first) of which the outer `keep` are those of
 * an earlier path's (from its own n_from) and the rest new call sites. */
static void path_part(uint64_t *to, unsigned int n, const uint64_t *from,
		      unsigned int n_from, unsigned int keep,
		      uint64_t (*site)(unsigned int))
{
	for (unsigned int j = 0; j < n; j++)
		to[n - 1 - j] = j < keep ? from[n_from - 1 - j] : site(j);
}

/* Path i branches off an earlier one: it shares some of its outer frames,
 * as a program's calls share main and the loops around them. */
static void make_path(uint32_t i)
{
	struct call_path *c = &paths.p[i];
	const struct call_path *up = i ? &paths.p[between(0, i - 1)] : NULL;
	unsigned int nu = (unsigned int)between(2, MAXU);
	unsigned int nk = (unsigned int)between(2, MAXK);
	unsigned int ku = up ? (unsigned int)between(0, (nu < up->nu ? nu : up->nu) - 1) : 0;
	unsigned int kk = up ? (unsigned int)between(0, (nk < up->nk ? nk : up->nk) - 1) : 0;

	c->nu = (uint8_t)nu;
	c->nk = (uint8_t)nk;
	path_part(c->u, nu, up ? up->u : NULL, up ? up->nu : 0, ku, user_site);
	path_part(c->k, nk, up ? up->k : NULL, up ? up->nk : 0, kk, kernel_site);
}

static void make_paths(void)
{
	uint64_t sum = 0;

	paths.p = xrealloc(NULL, g.o.paths * sizeof(*paths.p));
	paths.cum = xrealloc(NULL, g.o.paths * sizeof(*paths.cum));
	for (unsigned int i = 0; i < LIBC_FUNCS; i++)
		paths.libc_func[i] = LIBC_BASE + between(0x100, 0x1fff0) * 16;
	for (uint32_t i = 0; i < g.o.paths; i++) {
		make_path(i);
		sum += (1ULL << 32) / (i + 1);	/* Zipf: weight 1 / (i + 1) */
		paths.cum[i] = sum;
	}
}

/* A path, the hot ones far more often */
static const struct call_path *draw_path(uint32_t *id)
{
	uint64_t x = rnd() % paths.cum[g.o.paths - 1];
	uint32_t lo = 0, hi = g.o.paths - 1;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (paths.cum[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	*id = lo;
	return &paths.p[lo];
}

/* With --paths, the kernel part of the task's path (a kernel thread's: of
 * a path drawn now), sampled in it or in one of its two callers. */
static void kernel_chain(const uint32_t *path, struct ksample *s)
{
	if (g.o.paths) {
		uint32_t id;
		const struct call_path *c = path ? &paths.p[*path] : draw_path(&id);
		unsigned int skip = (unsigned int)between(0, c->nk > 4 ? 2 : c->nk - 2);

		s->nk = (uint8_t)(c->nk - skip);
		memcpy(s->k, c->k + skip, s->nk * sizeof(*s->k));
		return;
	}
	s->nk = (uint8_t)between(2, MAXK);
	for (unsigned int i = 0; i < s->nk; i++)
		s->k[i] = KERNEL_TEXT + between(0x1000, 0xfffff) * 16 + i;
}

static void user_stack(struct task *t)
{
	if (g.o.paths) {
		const struct call_path *c = draw_path(&t->path);

		t->nu = c->nu;
		memcpy(t->u, c->u, c->nu * sizeof(*t->u));
		return;
	}
	t->nu = (unsigned int)between(2, MAXU);
	for (unsigned int i = 0; i < t->nu; i++)
		t->u[i] = (i + 1 < t->nu ? LIBC_BASE + between(0x1000, 0x1fffff) :
			   EXE_BASE + between(0x1000, 0xffff));
}

/* Writes one sample. chain = [KERNEL, k...] then either the deferred tail
 * [USER_DEFERRED, cookie], or an ordinary [USER, u...] (user != NULL). */
static void write_sample(const struct task *t, uint32_t pid, uint32_t tid,
			 unsigned int cpu, const struct ksample *s, bool deferred,
			 const uint64_t *u, unsigned int nu, uint64_t cookie)
{
	uint64_t chain[2 + MAXK + 1 + MAXU];
	unsigned int n = 0;
	struct cs_sample smp = {
		.pid = pid, .tid = tid, .time = s->time, .cpu = cpu,
		.id = sampling_id(cpu), .period = 250000,
		.misc = s->nk ? CS_MISC_KERNEL : CS_MISC_USER,
	};

	if (s->nk) {
		chain[n++] = CS_CONTEXT_KERNEL;
		memcpy(chain + n, s->k, s->nk * sizeof(*chain));
		n += s->nk;
	}
	if (deferred) {
		chain[n++] = CS_CONTEXT_USER_DEFERRED;
		chain[n++] = cookie;
		g.c.deferred_samples++;
	} else if (u) {
		chain[n++] = CS_CONTEXT_USER;
		memcpy(chain + n, u, nu * sizeof(*chain));
		n += nu;
	}
	/* a user-mode sample's ip is where the user code was */
	smp.ip = s->nk ? s->k[0] : (t ? t->u[0] : 0);
	g.c.samples++;
	put(cpu, s->time, cs_encode_sample(&g.sattr, &smp, chain, n, g.rec,
					   sizeof(g.rec)));
}

/* Samples that waited for a record that will not come: kernel part only. */
static void release_waiting(struct task *t, enum cs_missing_reason why)
{
	static const char *const name[] = {
		[CS_MISSING_LOST] = "lost", [CS_MISSING_SUPERSEDED] = "superseded",
		[CS_MISSING_EXITED] = "exited", [CS_MISSING_END] = "end",
	};

	for (size_t i = 0; i < t->nwait; i++) {
		expect_line(t->tid, t->wait[i].time, "kernel-only", name[why],
			    t->wait[i].k, t->wait[i].nk, NULL, 0, false);
		g.c.kernel_only++;
		g.c.by[why]++;
	}
	t->nwait = 0;
}

/* The task shows a newer kernel entry: the old one's record is not coming. */
static void supersede(struct task *t)
{
	if (t->nwait)
		release_waiting(t, g.lost_seq != t->wait_lost_seq ?
				CS_MISSING_LOST : CS_MISSING_SUPERSEDED);
}

static void wait_for_record(struct task *t, const struct ksample *s)
{
	if (!t->nwait) {
		t->wait_lost_seq = g.lost_seq;
		t->wait_cookie = t->cookie;
	}
	if (t->nwait == t->cap_wait) {
		t->cap_wait = t->cap_wait ? 2 * t->cap_wait : 64;
		t->wait = xrealloc(t->wait, t->cap_wait * sizeof(*t->wait));
	}
	t->wait[t->nwait++] = *s;
}

static uint64_t new_cookie(struct task *t)
{
	uint64_t c;

	do
		c = rnd();
	while (c == t->last_cookie || c == 0);
	t->last_cookie = c;
	return c;
}

static void write_side_band_task(struct task *t, uint64_t time, bool new_process)
{
	struct cs_sample_id id = sid(t->pid, t->tid, time, t->cpu, false);
	struct cs_fork_exit f = { .pid = t->pid, .ppid = t->ppid, .tid = t->tid,
				  .ptid = t->ptid, .time = time };
	char name[16];
	struct cs_comm cm = { .pid = t->pid, .tid = t->tid, .comm = name };

	if (g.o.paths)
		snprintf(name, sizeof(name), "prog-%u", t->program);
	else
		snprintf(name, sizeof(name), "synth-%u", t->tid);
	put(t->cpu, time, cs_encode_fork_exit(&g.dattr, CS_RECORD_FORK, &f, &id,
					      g.rec, sizeof(g.rec)));
	if (!new_process)
		return;
	id.time = time = tick();
	put(t->cpu, time, cs_encode_comm(&g.dattr, &cm, true, &id, g.rec,
					 sizeof(g.rec)));
	struct cs_mmap exe = { .pid = t->pid, .tid = t->tid, .start = EXE_BASE,
			       .len = 0x10000, .pgoff = 0, .maj = 8, .min = 1,
			       .ino = 1000 + t->pid, .prot = 5, .flags = 2,
			       .filename = "/usr/bin/synth" };
	struct cs_mmap libc = { .pid = t->pid, .tid = t->tid, .start = LIBC_BASE,
				.len = 0x200000, .pgoff = 0x26000, .maj = 8, .min = 1,
				.ino = 77, .prot = 5, .flags = 2,
				.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6" };

	id.time = time = tick();
	put(t->cpu, time, cs_encode_mmap2(&g.dattr, &exe, CS_MISC_USER, &id, g.rec,
					  sizeof(g.rec)));
	id.time = time = tick();
	put(t->cpu, time, cs_encode_mmap2(&g.dattr, &libc, CS_MISC_USER, &id, g.rec,
					  sizeof(g.rec)));
}

static struct task *spawn(const struct task *parent)
{
	struct task *t;
	bool thread = parent && chance(400);

	if (nr_tasks == cap_tasks) {
		cap_tasks = cap_tasks ? 2 * cap_tasks : 64;
		tasks = xrealloc(tasks, cap_tasks * sizeof(*tasks));
	}
	t = &tasks[nr_tasks++];
	memset(t, 0, sizeof(*t));
	t->tid = next_pid++;
	t->pid = thread ? parent->pid : t->tid;
	t->ppid = parent ? parent->pid : 1;
	t->ptid = parent ? parent->tid : 1;
	t->cpu = (unsigned int)between(0, g.o.cpus - 1);
	t->alive = true;
	if (g.o.paths)
		t->program = thread ? parent->program :
			     (unsigned int)between(0, PROGRAMS - 1);
	user_stack(t);
	write_side_band_task(t, tick(), !thread);
	return t;
}

static void task_exit(struct task *t)
{
	uint64_t time = tick();
	struct cs_sample_id id = sid(t->pid, t->tid, time, t->cpu, false);
	struct cs_fork_exit f = { .pid = t->pid, .ppid = t->ppid, .tid = t->tid,
				  .ptid = t->ptid, .time = time };

	put(t->cpu, time, cs_encode_fork_exit(&g.dattr, CS_RECORD_EXIT, &f, &id,
					      g.rec, sizeof(g.rec)));
	release_waiting(t, CS_MISSING_EXITED);
	t->alive = false;
	t->in_kernel = false;
}

/* The deferred record of the task's current entry, and what may follow it:
 * a second copy from another defer_output event, at the same time. */
static void write_record(struct task *t, bool orphan)
{
	uint64_t time = tick();
	uint64_t ips[MAXU + 1];
	unsigned int n = 0;
	struct cs_sample_id id = sid(t->pid, t->tid, time, t->cpu, false);
	struct cs_deferred d = { .cookie = t->cookie, .ips = ips };

	/* drafts of the feature put a USER marker first: either reads the same */
	if (chance(200))
		ips[n++] = CS_CONTEXT_USER;
	memcpy(ips + n, t->u, t->nu * sizeof(*ips));
	d.nr = n + t->nu;
	put(t->cpu, time, cs_encode_deferred(&g.dattr, &d, &id, g.rec, sizeof(g.rec)));
	g.c.deferred_records++;
	if (orphan)
		g.c.orphans++;
	if (chance(30)) {
		id = sid(t->pid, t->tid, time, t->cpu, true);
		put(t->cpu, time, cs_encode_deferred(&g.dattr, &d, &id, g.rec,
						     sizeof(g.rec)));
		g.c.deferred_records++;
		g.c.duplicates++;
	}
	t->record_seen = true;
}

static void write_lost(struct task *t)
{
	uint64_t time = tick();
	struct cs_sample_id id = sid(0, 0, time, t->cpu, false);
	struct cs_lost l = { .id = side_id(t->cpu), .lost = between(1, 3) };

	id.pid = id.tid = (uint32_t)-1;
	put(t->cpu, time, cs_encode_lost(&g.dattr, &l, &id, g.rec, sizeof(g.rec)));
	g.lost_seq++;
	g.c.lost_events += l.lost;
}

/* A kernel sample of the current entry, deferred: it waits for the entry's
 * record, or is late when the record was already written. */
static void entry_sample(struct task *t, bool user_mode)
{
	struct ksample s = { 0 };

	if (!user_mode)
		kernel_chain(&t->path, &s);
	s.time = tick();
	if (t->nwait && t->wait_cookie != t->cookie)
		supersede(t);
	write_sample(t, t->pid, t->tid, t->cpu, &s, true, NULL, 0, t->cookie);
	if (t->record_seen) {
		expect_line(t->tid, s.time, "late", "-", s.k, s.nk, t->u, t->nu, true);
		g.c.late++;
	} else {
		wait_for_record(t, &s);
	}
}

static void enter_kernel(struct task *t, bool user_mode)
{
	t->in_kernel = true;
	t->cookie = new_cookie(t);
	t->record_seen = false;
	t->user_mode_entry = user_mode;
	/* it called something else since (with --paths: every entry is
	 * made from a call path of its own) */
	if (g.o.paths || chance(150))
		user_stack(t);
	if (user_mode)
		t->left = 1;
	else if (g.o.short_entries)
		t->left = (unsigned int)between(1, 2);
	else if (chance(40))
		t->left = (unsigned int)between(100, 400);	/* a long system call */
	else
		t->left = (unsigned int)between(1, 12);
	t->late = chance(100) ? (unsigned int)between(1, 3) : 0;
	t->exit_path = chance(60) ? (unsigned int)between(1, 2) : 0;
}

/* The samples that waited for this entry's record: all of them stitched. */
static void stitch_waiting(struct task *t)
{
	for (size_t i = 0; i < t->nwait; i++) {
		expect_line(t->tid, t->wait[i].time, "stitched", "-", t->wait[i].k,
			    t->wait[i].nk, t->u, t->nu, true);
		g.c.stitched++;
	}
	t->nwait = 0;
}

/* The task returns to user space: the fate of its entry's user stack. */
static void leave_kernel(struct task *t)
{
	unsigned int r = (unsigned int)between(0, 999);

	/* the task may have moved since its samples: the record goes to the
	 * CPU it returns on */
	if (chance(80))
		t->cpu = (unsigned int)between(0, g.o.cpus - 1);
	if (r < 25) {
		write_lost(t);
	} else if (r < 35) {
		/* nothing at all: a newer entry will tell */
	} else if (r < 45) {
		task_exit(t);
		return;
	} else {
		if (t->nwait && t->wait_cookie != t->cookie)
			supersede(t);
		write_record(t, !t->nwait);
		stitch_waiting(t);
	}
	t->in_kernel = false;
}

static void ordinary_sample(struct task *t, bool with_user)
{
	struct ksample s = { 0 };

	kernel_chain(&t->path, &s);
	s.time = tick();
	write_sample(t, t->pid, t->tid, t->cpu, &s, false, with_user ? t->u : NULL,
		     with_user ? t->nu : 0, 0);
	expect_line(t->tid, s.time, "original", "-", s.k, s.nk, t->u,
		    with_user ? t->nu : 0, with_user);
	g.c.original++;
}

/* One step of one task. */
static void step(struct task *t)
{
	if (t->in_kernel) {
		if (t->left) {
			if (t->left > 3 && chance(20))
				t->cpu = (unsigned int)between(0, g.o.cpus - 1);
			entry_sample(t, t->user_mode_entry);
			t->left--;
			return;
		}
		leave_kernel(t);
		return;
	}
	/* back in user space: what the exit path and unwinding left over */
	if (t->late) {
		entry_sample(t, false);
		t->late--;
		return;
	}
	if (t->exit_path) {
		ordinary_sample(t, true);
		t->exit_path--;
		return;
	}
	if (chance(8)) {
		task_exit(t);
		return;
	}
	if (chance(15)) {
		/* a kernel entry without samples: its record matches nothing */
		enter_kernel(t, false);
		t->left = 0;
		t->in_kernel = false;
		supersede(t);
		write_record(t, true);
		return;
	}
	enter_kernel(t, chance(200));
}

/* ---- without deferral: what perf 6.1 can read ---- */

static void step_nodefer(struct task *t)
{
	if (chance(8)) {
		task_exit(t);
		return;
	}
	if (g.o.paths || chance(150))
		user_stack(t);
	if (chance(30))
		t->cpu = (unsigned int)between(0, g.o.cpus - 1);
	ordinary_sample(t, true);
}

static void kthread_sample(unsigned int i)
{
	struct ksample s = { 0 };
	uint32_t tid = 10 + i;
	unsigned int cpu = i % g.o.cpus;

	kernel_chain(NULL, &s);
	s.time = tick();
	write_sample(NULL, tid, tid, cpu, &s, false, NULL, 0, 0);
	expect_line(tid, s.time, "original", "-", s.k, s.nk, NULL, 0, false);
	g.c.original++;
}

/* ---- the file ---- */

static void setup_attrs(void)
{
	uint64_t st = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
		      CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD |
		      CS_SAMPLE_CALLCHAIN;

	g.sattr.type = CS_PERF_TYPE_SOFTWARE;
	g.sattr.size = CS_PERF_ATTR_SIZE_VER7;
	g.sattr.config = CS_PERF_COUNT_SW_CPU_CLOCK;
	g.sattr.sample_period = 250000;
	g.sattr.sample_type = st;
	g.sattr.flags = CS_ATTR_DISABLED | CS_ATTR_INHERIT | CS_ATTR_SAMPLE_ID_ALL |
			CS_ATTR_EXCLUDE_GUEST;
	g.dattr = g.sattr;
	g.dattr.config = CS_PERF_COUNT_SW_DUMMY;
	g.dattr.sample_period = 1;
	g.dattr.flags |= CS_ATTR_MMAP | CS_ATTR_COMM | CS_ATTR_TASK | CS_ATTR_MMAP2 |
			 CS_ATTR_COMM_EXEC;
	if (!g.o.no_defer) {
		/* duplicates come from the sampling event also emitting records */
		g.sattr.flags |= CS_ATTR_DEFER_CALLCHAIN | CS_ATTR_DEFER_OUTPUT;
		g.dattr.flags |= CS_ATTR_DEFER_OUTPUT;
	}
}

static void open_output(int argc, char **argv)
{
	struct cs_writer_opts wo = {
		.pipe = g.o.pipe, .big_endian = g.o.big_endian, .zstd_level = g.o.zstd,
	};
	struct cs_errbuf eb = { { 0 } };
	uint64_t *ids = xrealloc(NULL, g.o.cpus * sizeof(*ids));
	if (cs_writer_open(g.o.output, -1, &wo, &eb, &g.w)) {
		fprintf(stderr, "gen_synth: %s\n", eb.msg);
		exit(1);
	}
	setup_attrs();
	for (unsigned int c = 0; c < g.o.cpus; c++)
		ids[c] = sampling_id(c);
	check_writer(cs_writer_add_event(g.w, &g.sattr, "cpu-clock", ids, g.o.cpus));
	for (unsigned int c = 0; c < g.o.cpus; c++)
		ids[c] = side_id(c);
	check_writer(cs_writer_add_event(g.w, &g.dattr, "dummy:u", ids, g.o.cpus));
	free(ids);
	check_writer(cs_writer_set_string(g.w, CS_FEAT_HOSTNAME, "synth"));
	check_writer(cs_writer_set_string(g.w, CS_FEAT_OSRELEASE, "6.19.0-synth"));
	check_writer(cs_writer_set_string(g.w, CS_FEAT_VERSION, "gen_synth"));
	check_writer(cs_writer_set_string(g.w, CS_FEAT_ARCH, "x86_64"));
	check_writer(cs_writer_set_nr_cpus(g.w, g.o.cpus, g.o.cpus));
	check_writer(cs_writer_set_cmdline(g.w, argc, (const char *const *)argv));
	check_writer(cs_writer_begin(g.w));
}

/* The made-up kernel's symbols, as /proc/kallsyms lists them */
static void write_kallsyms(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "gen_synth: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fprintf(f, "%016llx T _text\n", (unsigned long long)KERNEL_TEXT);
	for (unsigned int i = 0; i < KFUNCS; i++)
		fprintf(f, "%016llx T synth_kfunc_%u\n",
			(unsigned long long)kfunc_start(i), i);
	fprintf(f, "%016llx T _etext\n", (unsigned long long)kfunc_start(KFUNCS));
	if (fclose(f)) {
		fprintf(stderr, "gen_synth: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

/* What perf writes before the rings: the kernel map and the kernel threads. */
static void synthesize_start(void)
{
	struct cs_sample_id id = { .pid = (uint32_t)-1, .tid = 0, .id = 200 };
	struct cs_mmap k = { .pid = (uint32_t)-1, .tid = 0, .start = KERNEL_TEXT,
			     .len = 0x1400000, .pgoff = KERNEL_TEXT,
			     .filename = "[kernel.kallsyms]_text" };
	long n = cs_encode_mmap(&g.dattr, &k, CS_MISC_KERNEL, &id, g.rec,
				sizeof(g.rec));

	if (n < 0)
		die("cannot encode the kernel map");
	check_writer(cs_writer_write(g.w, g.rec, (size_t)n));
	for (unsigned int i = 0; i < NR_KTHREADS; i++) {
		char name[16];
		struct cs_comm c = { .pid = 10 + i, .tid = 10 + i, .comm = name };

		snprintf(name, sizeof(name), "kworker/%u:1", i);
		id.pid = id.tid = 10 + i;
		n = cs_encode_comm(&g.dattr, &c, false, &id, g.rec, sizeof(g.rec));
		if (n < 0)
			die("cannot encode a comm");
		check_writer(cs_writer_write(g.w, g.rec, (size_t)n));
	}
	check_writer(cs_writer_finished_round(g.w));
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "expect", required_argument, NULL, 'e' },
		{ "samples", required_argument, NULL, 'n' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "tasks", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "big-endian", no_argument, NULL, 'B' },
		{ "pipe", no_argument, NULL, 'P' },
		{ "compress", optional_argument, NULL, 'z' },
		{ "no-defer", no_argument, NULL, 'D' },
		{ "paths", required_argument, NULL, 'p' },
		{ "short-entries", no_argument, NULL, 'S' },
		{ "kallsyms", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;
	char *end;

	g.o.output = "perf.data";
	g.o.samples = 100000;
	g.o.cpus = 4;
	g.o.tasks = 16;
	g.o.seed = 1;
	while ((c = getopt_long(argc, argv, "o:n:C:t:s:z::h", lo, NULL)) != -1) {
		unsigned long long v = 0;

		if (optarg && strchr("nCtszp", c)) {
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "gen_synth: bad number '%s'\n", optarg);
				exit(2);
			}
		}
		switch (c) {
		case 'o': g.o.output = optarg; break;
		case 'e': g.o.expect = optarg; break;
		case 'n': g.o.samples = v; break;
		case 'C': g.o.cpus = (unsigned int)v; break;
		case 't': g.o.tasks = (unsigned int)v; break;
		case 's': g.o.seed = v; break;
		case 'B': g.o.big_endian = true; break;
		case 'P': g.o.pipe = true; break;
		case 'z': g.o.zstd = optarg ? (int)v : 1; break;
		case 'D': g.o.no_defer = true; break;
		case 'S': g.o.short_entries = true; break;
		case 'p':
			if (!v || v > MAX_PATHS) {
				fprintf(stderr, "gen_synth: --paths must be 1..%u\n",
					MAX_PATHS);
				exit(2);
			}
			g.o.paths = (uint32_t)v;
			break;
		case 'K': g.o.kallsyms = optarg; break;
		case 'h': fputs(usage, stdout); exit(0);
		default: fputs(usage, stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gen_synth: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (!g.o.cpus || g.o.cpus > 1024 || !g.o.tasks || g.o.tasks > 100000) {
		fprintf(stderr, "gen_synth: --cpus must be 1..1024, --tasks 1..100000\n");
		exit(2);
	}
	if (!strcmp(g.o.output, "-") && !g.o.pipe) {
		fprintf(stderr, "gen_synth: writing to stdout needs --pipe\n");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	parse(argc, argv);
	rng_state = g.o.seed;
	if (g.o.kallsyms)
		write_kallsyms(g.o.kallsyms);
	if (g.o.paths)
		make_paths();
	g.cpu = calloc(g.o.cpus, sizeof(*g.cpu));
	if (!g.cpu)
		die("out of memory");
	if (g.o.expect) {
		g.expect = fopen(g.o.expect, "w");
		if (!g.expect) {
			fprintf(stderr, "gen_synth: %s: %s\n", g.o.expect, strerror(errno));
			return 1;
		}
	}
	open_output(argc, argv);
	synthesize_start();
	g.now = 1000000000ULL;
	g.round_end = g.now + ROUND_NS;
	live = calloc(g.o.tasks, sizeof(*live));
	if (!live)
		die("out of memory");
	for (unsigned int i = 0; i < g.o.tasks; i++) {
		spawn(NULL);
		live[i] = nr_tasks - 1;
	}
	while (g.c.samples < g.o.samples) {
		size_t slot = (size_t)between(0, g.o.tasks - 1);
		struct task *t = &tasks[live[slot]];

		if (chance(30)) {
			kthread_sample((unsigned int)between(0, NR_KTHREADS - 1));
			continue;
		}
		if (g.o.no_defer)
			step_nodefer(t);
		else
			step(t);
		if (!t->alive) {
			struct task parent = *t;	/* spawn() may move tasks */

			spawn(&parent);
			live[slot] = nr_tasks - 1;
		}
	}
	/* the recording stops: what still waits, waits for ever */
	for (size_t i = 0; i < nr_tasks; i++)
		if (tasks[i].nwait)
			release_waiting(&tasks[i], CS_MISSING_END);
	drain(true);
	check_writer(cs_writer_finish(g.w));
	cs_writer_free(g.w);
	if (g.expect && fclose(g.expect))
		die("cannot write the expect file");
	/* the data may be on stdout */
	fprintf(strcmp(g.o.output, "-") ? stdout : stderr,
		"samples=%" PRIu64 " deferred=%" PRIu64 " stitched=%" PRIu64
		" late=%" PRIu64 " kernel-only=%" PRIu64 " lost=%" PRIu64
		" superseded=%" PRIu64 " exited=%" PRIu64 " end=%" PRIu64
		" original=%" PRIu64 " records=%" PRIu64 " duplicates=%" PRIu64
		" orphans=%" PRIu64 " lost-events=%" PRIu64 "\n",
		g.c.samples, g.c.deferred_samples, g.c.stitched, g.c.late,
		g.c.kernel_only, g.c.by[CS_MISSING_LOST],
		g.c.by[CS_MISSING_SUPERSEDED], g.c.by[CS_MISSING_EXITED],
		g.c.by[CS_MISSING_END], g.c.original, g.c.deferred_records,
		g.c.duplicates, g.c.orphans, g.c.lost_events);
	for (unsigned int c = 0; c < g.o.cpus; c++) {
		free(g.cpu[c].b);
		free(g.cpu[c].idx);
	}
	free(g.cpu);
	for (size_t i = 0; i < nr_tasks; i++)
		free(tasks[i].wait);
	free(tasks);
	free(live);
	free(paths.p);
	free(paths.cum);
	return 0;
}
