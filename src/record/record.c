/* record.c - runs one recording from the first event to the final header. */
#include "record/record.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abi/perf_abi.h"
#include "abi/perf_regs.h"
#include "lib/machine/dso.h"
#include "lib/util/errbuf.h"
#include "lib/util/grow.h"
#include "lib/write/writer.h"
#include "record/bidcache.h"
#include "record/child.h"
#include "record/dsos.h"
#include "record/synth.h"
#include "record/tracefs.h"
#include "record/tracing_data.h"
#include "lib/write/feature.h"

#define POLL_MS       100	/* longest sleep: progress and child checks */
#define PROGRESS_MS   250
#define DRAIN_STEP_MS   2	/* records arrive within ms of the stop */
#define REAP_MS      2000	/* a workload that ignores SIGTERM gets SIGKILL */

static volatile sig_atomic_t stop_signal, nr_signals, child_changed;

static void on_stop_signal(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
	nr_signals++;
}

static void on_sigchld(int sig)
{
	(void)sig;
	child_changed = 1;
}

struct rec {
	const struct cs_record_opts *o;
	struct cs_record_result *res;
	struct cs_errbuf *eb;
	struct cs_rec_evlist *l;
	struct cs_writer *w;
	struct cs_waiting *waiting;
	struct cs_dsos *dsos;
	struct pollfd *pfd;
	int npfd, hung;
	struct cs_rec_child child;	/* the command, if any */
	sigset_t oldmask;
	struct timespec last_progress;
	uint64_t last_flush_ns;
	bool writer_failed;
	bool begun;			/* the data section was started */
	char *cache_dir;		/* ~/.debug, once something goes there */
	bool cache_failed;		/* told once */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void notice(const struct cs_record_opts *o, const char *msg)
{
	if (o->notice)
		o->notice(o->ctx, msg);
}

static int writer_error(struct rec *r, int err)
{
	const char *msg = cs_writer_error(r->w);

	r->writer_failed = true;
	return cs_error(r->eb, err, "%s", msg && *msg ? msg : strerror(-err));
}

/* ---- the records that pass through --------------------------------------- */

static int on_record(void *ctx, const void *rec, size_t size)
{
	struct rec *r = ctx;
	const unsigned char *b = rec;
	struct cs_perf_event_header h;
	uint64_t v;
	int err;

	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case CS_RECORD_SAMPLE:
		r->res->samples++;
		break;
	case CS_RECORD_LOST:		/* header, id, lost */
		if (size >= 24) {
			memcpy(&v, b + 16, 8);
			r->res->lost += v;
		}
		break;
	case CS_RECORD_LOST_SAMPLES:	/* header, lost */
		if (size >= 16) {
			memcpy(&v, b + 8, 8);
			r->res->lost_samples += v;
		}
		break;
	}
	/* a record too short for its layout is the kernel's to explain; it
	 * still goes into the file for the reader to report */
	err = cs_waiting_see(r->waiting, rec, size);
	if (err == -ENOMEM)
		return err;
	err = cs_dsos_see(r->dsos, rec, size);
	if (err == -ENOMEM)
		return err;
	err = cs_writer_write(r->w, rec, size);
	return err ? writer_error(r, err) : 0;
}

static int on_synth(void *ctx, const void *rec, size_t size)
{
	struct rec *r = ctx;
	int err = cs_dsos_see(r->dsos, rec, size);

	if (err)
		return err;
	err = cs_writer_write(r->w, rec, size);
	return err ? writer_error(r, err) : 0;
}

/* One pass over every ring, then a FINISHED_ROUND if it found anything:
 * a reader may then sort what came before. */
static int read_rings(struct rec *r)
{
	uint64_t total = 0;
	int err;

	for (int c = 0; c < r->l->nr_cpus; c++) {
		long n = cs_ring_read(&r->l->rings[c], on_record, r);

		if (n < 0) {
			if (n == -EBADMSG)
				return cs_error(r->eb, -EBADMSG, "the ring of cpu %d holds a "
						"record with an impossible size", r->l->cpus[c]);
			return cs_error(r->eb, (int)n, "reading the ring of cpu %d: %s",
					r->l->cpus[c], strerror((int)-n));
		}
		total += (uint64_t)n;
	}
	if (!total)
		return 0;
	err = cs_writer_finished_round(r->w);
	if (err)
		return writer_error(r, err);
	/* push the writer's buffer to the file once a second: a recorder
	 * killed with SIGKILL then loses at most about a second of samples */
	if (now_ns() - r->last_flush_ns >= 1000000000ULL) {
		r->last_flush_ns = now_ns();
		err = cs_writer_flush(r->w);
		if (err)
			return writer_error(r, err);
	}
	return 0;
}

static void progress(struct rec *r, bool force)
{
	struct cs_record_progress p;
	struct timespec ts;

	if (!r->o->progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!force && (ts.tv_sec - r->last_progress.tv_sec) * 1000 +
	    (ts.tv_nsec - r->last_progress.tv_nsec) / 1000000 < PROGRESS_MS)
		return;
	r->last_progress = ts;
	p.samples = r->res->samples;
	p.bytes = cs_writer_data_size(r->w);
	p.lost = r->res->lost + r->res->lost_samples;
	r->o->progress(r->o->ctx, &p);
}

/* ---- targets ------------------------------------------------------------ */

/* The threads of process pid (from /proc/PID/task), malloc'ed. */
static int list_threads(pid_t pid, pid_t **out, size_t *nr)
{
	char path[64];
	struct dirent *de;
	pid_t *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -ESRCH;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (cs_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
			free(v);
			closedir(d);
			return -ENOMEM;
		}
		v[n++] = (pid_t)tid;
	}
	closedir(d);
	if (!n) {
		free(v);
		return -ESRCH;
	}
	*out = v;
	*nr = n;
	return 0;
}

/* The process (thread group) a thread belongs to, or 0. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strstr(buf, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : 0;
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* two fds per thread and CPU for -p on a big process */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- setup -------------------------------------------------------------- */

#define PERF_DEFAULT_PAGES	128	/* perf's 512 KiB with 4 KiB pages */
#define DWARF_RING_SAMPLES	128
#define DWARF_SAMPLE_EXTRA	512	/* registers, ids, a kernel callchain */
#define DWARF_MAX_PAGES		2048
#define TRACEPOINT_PAGES	1024	/* 4 MiB */

/* A tracepoint sampled at every hit comes as fast as what it traces. */
static bool every_hit_tracepoint(const struct cs_record_opts *o)
{
	for (size_t i = 0; i < o->events.nr; i++) {
		const struct cs_rec_event *e = &o->events.v[i];

		if (cs_rec_event_is_tracepoint(e) &&
		    (e->period ? e->period == 1 && !e->freq : !o->period_given))
			return true;
	}
	return false;
}

/* A dwarf sample is the size of its stack copy: 8 KiB by default, so
 * perf's 512 KiB ring holds about 60. At 4 kHz a CPU fills it in 15 ms,
 * and the reader, woken at a quarter full, must come within 11 ms or lose
 * samples, which a busy machine does not promise. So such a ring holds at
 * least DWARF_RING_SAMPLES of them: the reader gets 45 ms.
 *
 * sched_switch sampled at every switch-out (--off-cpu) is as bad: at 200k
 * switch-outs a CPU second, ~300 bytes each with its stack, it fills
 * perf's ring in 9 ms, and a loaded machine lets the reader wait longer
 * than that for its turn (bench/offcpu_lost.sh). Its 4 MiB give it 70 ms. */
size_t cs_record_default_pages(const struct cs_record_opts *o)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t want, pages = PERF_DEFAULT_PAGES;

	if (every_hit_tracepoint(o))
		pages = TRACEPOINT_PAGES;
	if (!o->dwarf_stack)
		return pages;
	want = DWARF_RING_SAMPLES * ((size_t)o->dwarf_stack + DWARF_SAMPLE_EXTRA) / page;
	while (pages < want && pages < DWARF_MAX_PAGES)
		pages *= 2;
	return pages;
}

static int open_events(struct rec *r)
{
	const struct cs_record_opts *o = r->o;
	struct cs_rec_evopts eo = {
		.events = o->events.v,
		.nr_events = o->events.nr,
		.freq = o->freq,
		.period = o->period,
		.period_given = o->period_given,
		.callchain = o->callchain,
		.defer = o->defer,
		.dwarf_stack = o->dwarf_stack,
		.switch_events = o->switch_events,
		.system_wide = o->system_wide,
		.cpus = o->cpus,
		.nr_cpus = o->nr_cpus,
		.mmap_pages = o->mmap_pages,
	};
	pid_t *threads = NULL, one;
	int err;

	if (!o->mmap_pages) {
		/* our default may ask for more than the locked-memory limit
		 * allows: then less, down to perf's */
		eo.mmap_pages = cs_record_default_pages(o);
		if (eo.mmap_pages > PERF_DEFAULT_PAGES)
			eo.min_mmap_pages = PERF_DEFAULT_PAGES;
	}
	if (o->system_wide) {
		/* nothing per thread */
	} else if (r->child.pid > 0) {
		one = r->child.pid;
		eo.threads = &one;
		eo.nr_threads = 1;
		eo.inherit = true;
		eo.enable_on_exec = true;
	} else if (o->pid > 0) {
		err = list_threads(o->pid, &threads, &eo.nr_threads);
		if (err)
			return cs_error(r->eb, err, "no such process: %d", (int)o->pid);
		eo.threads = threads;
		eo.inherit = true;
	} else {
		one = o->tid;
		eo.threads = &one;
		eo.nr_threads = 1;
	}
	err = cs_rec_evlist_open(&eo, r->eb, &r->l);
	free(threads);
	if (err)
		return err;
	r->res->event_name = r->l->evsels[0].name;
	r->res->mmap_pages = r->l->mmap_pages;
	if (r->l->mmap_pages < eo.mmap_pages) {
		char msg[256];

		snprintf(msg, sizeof(msg), "the locked-memory limit allows rings of %zu "
			 "KiB per CPU, not %zu: samples may be lost (raise "
			 "/proc/sys/kernel/perf_event_mlock_kb or ulimit -l)",
			 r->l->mmap_pages * (size_t)sysconf(_SC_PAGESIZE) / 1024,
			 eo.mmap_pages * (size_t)sysconf(_SC_PAGESIZE) / 1024);
		notice(o, msg);
	}
	r->res->defer_unsupported = r->l->defer_unsupported;
	r->res->defer_on = cs_rec_evlist_defer_on(r->l);
	if (r->l->fell_back_cpu_clock)
		notice(o, "the cycles event is not supported here (no hardware PMU); "
		       "recording cpu-clock instead");
	if (r->l->user_only) {
		char msg[160];

		snprintf(msg, sizeof(msg), "kernel samples are not allowed here "
			 "(perf_event_paranoid is %d): recording user space only",
			 paranoid_level());
		notice(o, msg);
	}
	if (r->l->defer_unsupported)
		notice(o, "kernel does not support deferred callchains (Linux 6.19+); "
		       "recording ordinary callchains");
	return 0;
}

/* Keeps the previous recording at path as path.old, as perf does. A link
 * stays where it is (renaming /dev/stdout would move the link itself): the
 * file it names is kept beside that file. */
static void keep_previous(const char *path)
{
	char real[PATH_MAX], old[PATH_MAX + 8];
	struct stat st;

	if (!lstat(path, &st) && S_ISLNK(st.st_mode)) {
		if (!realpath(path, real))
			return;
		path = real;
	}
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
		return;
	snprintf(old, sizeof(old), "%s.old", path);
	rename(path, old);
}

/* The output first: a path that cannot be written is refused before any
 * event is opened. */
static int open_output(struct rec *r)
{
	const struct cs_record_opts *o = r->o;
	struct cs_writer_opts wo = {
		.pipe = !strcmp(o->output, "-"),
		.zstd_level = o->zstd_level,
	};

	if (!wo.pipe)
		keep_previous(o->output);
	return cs_writer_open(o->output, -1, &wo, r->eb, &r->w);
}

/* The formats of the tracepoints recorded, which readers need to make sense
 * of their raw data. */
static int add_tracing_data(struct rec *r)
{
	const struct cs_rec_events *ev = &r->o->events;
	struct cs_fbuf td = { 0 };
	const char *tracefs;
	bool any = false;
	int err;

	for (size_t i = 0; i < ev->nr; i++)
		any |= cs_rec_event_is_tracepoint(&ev->v[i]);
	if (!any)
		return 0;
	if (cs_rec_tracefs_find(&tracefs))
		return cs_error(r->eb, -ENOENT, "tracing data: tracefs is not mounted");
	err = cs_rec_tracing_data(tracefs, ev->v, ev->nr, &td, r->eb);
	if (!err)
		err = cs_writer_set_feature_raw(r->w, CS_FEAT_TRACING_DATA, td.p, td.len);
	cs_fbuf_free(&td);
	return err;
}

/* The events and the header's metadata, then the data section begins. */
static int begin_output(struct rec *r)
{
	const struct cs_record_opts *o = r->o;
	struct cs_rec_evlist *l = r->l;
	long avail = sysconf(_SC_NPROCESSORS_CONF);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int err = 0;

	for (size_t k = 0; k < l->nr_evsels && !err; k++)
		err = cs_writer_add_event(r->w, &l->evsels[k].attr, l->evsels[k].name,
					  l->evsels[k].ids, l->evsels[k].nr_ids);
	if (!err)
		err = add_tracing_data(r);
	if (!err && o->version)
		err = cs_writer_set_string(r->w, CS_FEAT_VERSION, o->version);
	if (!err && o->self_argv)
		err = cs_writer_set_cmdline(r->w, o->self_argc, o->self_argv);
	if (!err)
		err = cs_writer_set_nr_cpus(r->w, online > 0 ? (uint32_t)online :
					    (uint32_t)l->nr_cpus, avail > 0 ?
					    (uint32_t)avail : (uint32_t)l->nr_cpus);
	if (!err)
		err = cs_writer_begin(r->w);
	if (err)
		return writer_error(r, err);
	r->begun = true;
	return 0;
}

static int synthesize(struct rec *r)
{
	const struct cs_record_opts *o = r->o;
	struct cs_synth *s = calloc(1, sizeof(*s));
	struct cs_perf_event_header fin = {
		.type = CS_RECORD_FINISHED_INIT, .size = sizeof(fin),
	};
	int err;

	if (!s)
		return -ENOMEM;
	s->attr = &cs_rec_evlist_tracking(r->l)->attr;
	s->id = cs_rec_evlist_tracking(r->l)->ids[0];
	s->data_maps = !!(s->attr->flags & CS_ATTR_MMAP_DATA);
	s->emit = on_synth;
	s->ctx = r;
	err = cs_synth_kernel(s);
	if (err == -ENOENT || err == -EACCES)
		err = 0;	/* kernel addresses hidden: user frames still resolve */
	if (!err) {
		if (o->system_wide)
			err = cs_synth_all(s);
		else if (o->pid > 0)
			err = cs_synth_process(s, o->pid);
		else if (o->tid > 0)
			err = cs_synth_process(s, tgid_of(o->tid) ? tgid_of(o->tid) : o->tid);
		/* a command announces itself: its exec brings COMM and MMAP2 */
	}
	free(s);
	if (err) {
		if (!r->writer_failed)
			err = cs_error(r->eb, err, "synthesising the side band: %s",
				       strerror(-err));
		return err;
	}
	err = cs_writer_write(r->w, &fin, sizeof(fin));
	return err ? writer_error(r, err) : 0;
}

/* Every sampling event's fd, not only the rings' owners: an event reports
 * POLLHUP when its task (and every task that inherited it) is gone, so the
 * recording of -p/-t ends when all of them have. Readiness is the ring's,
 * whichever fd reports it. */
static int setup_poll(struct rec *r)
{
	size_t n = (size_t)r->l->nr_cpus * r->l->nr_threads;

	r->pfd = calloc(n * r->l->nr_evsels, sizeof(*r->pfd));
	if (!r->pfd)
		return -ENOMEM;
	for (size_t k = 0; k < r->l->nr_evsels; k++) {
		const struct cs_rec_evsel *e = &r->l->evsels[k];

		for (size_t i = 0; i < n && !e->tracking; i++) {
			if (e->fds[i] < 0)
				continue;
			r->pfd[r->npfd].fd = e->fds[i];
			r->pfd[r->npfd].events = POLLIN;
			r->npfd++;
		}
	}
	return 0;
}

/* ---- running and stopping ----------------------------------------------- */

static int wait_for_data(struct rec *r, int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	int n = ppoll(r->pfd, (nfds_t)r->npfd, &ts, &r->oldmask);

	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int c = 0; c < r->npfd; c++) {
		if (r->pfd[c].fd >= 0 && (r->pfd[c].revents & (POLLHUP | POLLERR))) {
			/* the target is gone on this ring: stop polling it,
			 * keep reading what it holds */
			r->pfd[c].fd = -1;
			r->hung++;
		}
	}
	return 0;
}

static int main_loop(struct rec *r)
{
	const struct cs_record_opts *o = r->o;
	int err;

	for (;;) {
		err = read_rings(r);
		if (err)
			return err;
		progress(r, false);
		if (stop_signal)
			break;
		if (r->child.pid > 0 && child_changed) {
			child_changed = 0;
			if (cs_rec_child_reap(&r->child, false))
				break;
		}
		/* -p/-t: every target thread exited */
		if (!o->system_wide && !o->argv && r->hung == r->npfd)
			break;
		err = wait_for_data(r, POLL_MS);
		if (err)
			return cs_error(r->eb, err, "poll: %s", strerror(-err));
	}
	return 0;
}

/* Stops sampling, then reads while samples still wait for their deferred
 * user stack: the dummies stay enabled and keep receiving the records of
 * tasks that return to user space after the stop. */
static int stop_and_drain(struct rec *r)
{
	uint64_t start = now_ns(), limit = start + r->o->drain_ms * 1000000ULL;
	int err;

	cs_rec_evlist_disable(r->l, true);
	err = read_rings(r);
	while (!err && cs_waiting_samples(r->waiting) && now_ns() < limit &&
	       nr_signals < 2) {
		struct timespec ts = { 0, DRAIN_STEP_MS * 1000000L };

		/* a second Ctrl-C ends the drain */
		ppoll(NULL, 0, &ts, &r->oldmask);
		err = read_rings(r);
	}
	r->res->drain_ns = now_ns() - start;
	cs_rec_evlist_disable(r->l, false);
	if (!err)
		err = read_rings(r);
	r->res->still_waiting = cs_waiting_samples(r->waiting);
	r->res->waiting = *cs_waiting_stats(r->waiting);
	return err;
}

/* Whether /proc/kallsyms shows addresses to us (kptr_restrict hides them
 * as zeros): a cached copy of zeros would name nothing. */
static bool kallsyms_readable(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr = 0;

	if (!f)
		return false;
	if (fscanf(f, "%llx", &addr) != 1)
		addr = 0;
	fclose(f);
	return addr != 0;
}

/* A hit binary (or the kernel's symbols) into the build-id cache, when
 * asked or when only the recorder could still read it. A failure is told
 * once and does not fail the recording. */
static void cache_file(struct rec *r, uint16_t misc, const uint8_t *bid,
		       size_t size, const char *path, const char *src)
{
	const struct cs_record_opts *o = r->o;
	bool kernel = misc == CS_MISC_KERNEL;
	char msg[4200];
	int n;

	if (o->no_buildid_cache || (!o->buildid_cache && !src))
		return;
	if (kernel && !kallsyms_readable())
		return;
	if (!r->cache_dir && !(r->cache_dir = cs_bidcache_dir()))
		return;
	n = cs_bidcache_add(r->cache_dir, path, bid, size,
			    cs_build_id_leaf(kernel ? CS_FILE_KALLSYMS : CS_FILE_ELF),
			    src ? src : kernel ? "/proc/kallsyms" : path);
	if (n > 0) {
		r->res->cached++;
	} else if (n < 0 && !r->cache_failed) {
		r->cache_failed = true;
		snprintf(msg, sizeof(msg), "warning: cannot copy %s into the "
			 "build-id cache %s: %s", path, r->cache_dir, strerror(-n));
		notice(o, msg);
	}
}

static int add_build_id(void *ctx, uint16_t misc, const uint8_t *bid, size_t size,
			const char *path, const char *src)
{
	struct rec *r = ctx;
	int err = cs_writer_add_build_id(r->w, -1, misc, bid, size, path);

	if (err)
		return writer_error(r, err);
	cache_file(r, misc, bid, size, path, src);
	return 0;
}

static int finish(struct rec *r)
{
	struct stat st;
	int err = cs_dsos_for_each_hit(r->dsos, add_build_id, r);

	if (!err) {
		err = cs_writer_finish(r->w);
		if (err)
			err = writer_error(r, err);
	}
	r->res->bytes = cs_writer_data_size(r->w);
	if (!err && strcmp(r->o->output, "-") && !stat(r->o->output, &st))
		r->res->bytes = (uint64_t)st.st_size;
	if (r->res->cached) {
		char msg[4200];

		snprintf(msg, sizeof(msg), "copied %u file%s into the build-id "
			 "cache %s", r->res->cached, r->res->cached == 1 ? "" : "s",
			 r->cache_dir);
		notice(r->o, msg);
	}
	return err;
}

static int check_opts(const struct cs_record_opts *o, struct cs_errbuf *eb)
{
	int targets = !!o->system_wide + (o->pid > 0) + (o->tid > 0);

	if (targets > 1)
		return cs_error(eb, -EINVAL, "choose one of -a, -p and -t");
	if ((o->pid > 0 || o->tid > 0) && o->argv)
		return cs_error(eb, -EINVAL, "-p/-t record a running process: give no command");
	if (!targets && !o->argv)
		return cs_error(eb, -EINVAL, "nothing to record: give a command, -a, -p or -t");
	if (o->buildid_cache && o->no_buildid_cache)
		return cs_error(eb, -EINVAL, "choose one of --buildid-cache and "
				"--no-buildid-cache");
	if (!o->events.nr)
		return cs_error(eb, -EINVAL, "no event to record");
	if (!o->period)
		return cs_error(eb, -EINVAL, "the sampling %s must be positive",
				o->freq ? "frequency" : "period");
	if (o->mmap_pages & (o->mmap_pages - 1))
		return cs_error(eb, -EINVAL, "mmap pages must be a power of two, not %zu",
				o->mmap_pages);
	if (o->dwarf_stack) {
		if (!CS_PERF_REGS_USER_MASK)
			return cs_error(eb, -ENOTSUP, "--call-graph dwarf is not supported "
					"on this architecture yet");
		if (o->defer || !o->callchain)
			return cs_error(eb, -EINVAL, "--call-graph dwarf takes callchains "
					"without deferral");
		if (o->dwarf_stack % 8 || o->dwarf_stack > CS_PERF_STACK_USER_MAX)
			return cs_error(eb, -EINVAL, "the dwarf stack size must be a multiple "
					"of 8 up to %u, not %u", CS_PERF_STACK_USER_MAX,
					o->dwarf_stack);
	}
	return 0;
}

int cs_record_run(const struct cs_record_opts *o, struct cs_record_result *res,
		  struct cs_errbuf *eb)
{
	struct rec r = {
		.o = o, .res = res, .eb = eb,
		.child = { .go_fd = -1, .err_fd = -1, .status = -1 },
	};
	struct sigaction sa_stop = { .sa_handler = on_stop_signal };
	struct sigaction sa_chld = { .sa_handler = on_sigchld, .sa_flags = SA_NOCLDSTOP };
	struct sigaction sa_ign = { .sa_handler = SIG_IGN };
	struct sigaction old[5];
	sigset_t block;
	bool drop;
	int err, err2;

	memset(res, 0, sizeof(*res));
	res->workload_status = -1;
	err = check_opts(o, eb);
	if (err)
		return err;
	raise_fd_limit();
	stop_signal = nr_signals = child_changed = 0;

	/* signals only interrupt the waits (ppoll), never a half-done step */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &r.oldmask);
	sigaction(SIGINT, &sa_stop, &old[0]);
	sigaction(SIGTERM, &sa_stop, &old[1]);
	sigaction(SIGHUP, &sa_stop, &old[2]);
	sigaction(SIGCHLD, &sa_chld, &old[3]);
	sigaction(SIGPIPE, &sa_ign, &old[4]);

	err = open_output(&r);
	if (!err && o->argv)
		err = cs_rec_child_start(&r.child, o->argv, !strcmp(o->output, "-"),
					 &r.oldmask, eb);
	if (!err)
		err = open_events(&r);
	if (!err)
		err = setup_poll(&r);
	if (!err)
		err = cs_waiting_new(r.l->evsels[0].attr.sample_type, &r.waiting);
	if (!err)
		err = cs_dsos_new(r.l->evsels[0].attr.sample_type, &r.dsos);
	if (!err && o->dwarf_stack)
		cs_dsos_scan_user_stacks(r.dsos, r.l->evsels[0].attr.sample_regs_user);
	if (!err)
		err = begin_output(&r);
	if (!err)
		err = synthesize(&r);
	if (err)
		goto out;

	if (o->system_wide || !o->argv) {
		/* side band first, so that no sample precedes its maps */
		cs_rec_evlist_enable(r.l, false);
		err = cs_rec_evlist_enable(r.l, true);
		if (err) {
			err = cs_error(eb, err, "enabling the events: %s", strerror(-err));
			goto out;
		}
	}
	if (r.child.pid > 0) {
		err = cs_rec_child_release(&r.child, o->argv[0], eb);
		if (err)
			goto out;
	}

	err = main_loop(&r);
	err2 = stop_and_drain(&r);
	if (!err)
		err = err2;
	res->stop_signal = stop_signal;
	/* whatever went wrong, what was recorded gets a proper header */
	if (!r.writer_failed) {
		err2 = finish(&r);
		if (!err)
			err = err2;
	}
out:
	cs_rec_child_end(&r.child, REAP_MS);
	res->workload_status = r.child.status;
	/* nothing was recorded: leave no file that looks like a profile */
	drop = r.w && (r.child.exec_failed || !r.begun) && strcmp(o->output, "-");
	cs_writer_free(r.w);
	if (drop)
		unlink(o->output);
	cs_dsos_free(r.dsos);
	free(r.cache_dir);
	cs_waiting_free(r.waiting);
	cs_rec_evlist_free(r.l);
	free(r.pfd);
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	sigaction(SIGHUP, &old[2], NULL);
	sigaction(SIGCHLD, &old[3], NULL);
	sigaction(SIGPIPE, &old[4], NULL);
	sigprocmask(SIG_SETMASK, &r.oldmask, NULL);
	return err;
}
