/* events.c - perf_event_open with the fallbacks perf users expect. */
#include "record/events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "abi/perf_regs.h"
#include "lib/util/grow.h"
#include "lib/util/errbuf.h"

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int cs_rec_cpu_list_parse(const char *s, int **cpus)
{
	int *v = NULL;
	size_t n = 0, cap = 0;
	const char *p = s;

	*cpus = NULL;
	while (*p && *p != '\n') {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			goto bad;
		a = b = strtoul(p, &end, 10);
		if (*end == '-') {
			p = end + 1;
			if (*p < '0' || *p > '9')
				goto bad;
			b = strtoul(p, &end, 10);
		}
		if (b < a || b >= 65536)
			goto bad;
		for (unsigned long c = a; c <= b; c++) {
			if (cs_grow((void **)&v, &cap, n + 1, sizeof(*v))) {
				free(v);
				return -ENOMEM;
			}
			v[n++] = (int)c;
		}
		p = end;
		if (*p == ',' && p[1] >= '0' && p[1] <= '9')
			p++;
		else if (*p && *p != '\n')
			goto bad;
	}
	if (!n)
		goto bad;
	qsort(v, n, sizeof(*v), cmp_int);
	{
		size_t k = 1;

		for (size_t i = 1; i < n; i++)
			if (v[i] != v[k - 1])
				v[k++] = v[i];
		n = k;
	}
	*cpus = v;
	return (int)n;
bad:
	free(v);
	return -EINVAL;
}

int cs_rec_online_cpus(int **cpus)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char buf[4096];
	bool got;

	*cpus = NULL;
	if (!f)
		return -errno;
	got = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	return got ? cs_rec_cpu_list_parse(buf, cpus) : -EINVAL;
}

static int sys_perf_event_open(struct cs_perf_attr *attr, pid_t pid, int cpu)
{
	/* 128 bytes: every field we set lives there, and every kernel since
	 * 5.x knows that size */
	attr->size = CS_PERF_ATTR_SIZE_VER7;
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

#define WAKEUP_MAX	(256u << 10)

/* perf's defaults: a tracepoint records every hit and its raw data unless
 * -c/-F say otherwise; every other event takes -c/-F (or its own
 * period=/freq= term). */
static void sample_attr(const struct cs_rec_evopts *o, const struct cs_rec_event *ev,
			uint64_t common, size_t pages, struct cs_perf_attr *s)
{
	memset(s, 0, sizeof(*s));
	s->type = ev->type;
	s->config = ev->config;
	s->config1 = ev->config1;
	s->config2 = ev->config2;
	s->sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
			 CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD;
	if (o->callchain)
		s->sample_type |= CS_SAMPLE_CALLCHAIN;
	s->flags = common | CS_ATTR_WATERMARK | ev->flags;
	if (ev->period) {
		s->sample_period = ev->period;
		if (ev->freq)
			s->flags |= CS_ATTR_FREQ;
	} else if (cs_rec_event_is_tracepoint(ev) && !o->period_given) {
		s->sample_period = 1;
	} else {
		s->sample_period = o->period;
		if (o->freq)
			s->flags |= CS_ATTR_FREQ;
	}
	if (cs_rec_event_is_tracepoint(ev))
		s->sample_type |= CS_SAMPLE_RAW;
	if (o->callchain && o->defer)
		s->flags |= CS_ATTR_DEFER_CALLCHAIN;
	if (o->callchain && o->dwarf_stack) {
		/* as perf: the kernel part from the callchain, the user part
		 * unwound later from copies of the registers and the stack */
		s->sample_type |= CS_SAMPLE_REGS_USER | CS_SAMPLE_STACK_USER;
		s->flags |= CS_ATTR_EXCLUDE_CALLCHAIN_USER;
		s->sample_regs_user = CS_PERF_REGS_USER_MASK;
		s->sample_stack_user = o->dwarf_stack;
	}
	/* wake the reader when a quarter of the ring is used, at most
	 * WAKEUP_MAX (wakeup_watermark, in bytes): the rest absorbs the
	 * reader's scheduling delays, so a big ring keeps most of itself
	 * for them */
	s->wakeup_events = (uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	if (s->wakeup_events > WAKEUP_MAX)
		s->wakeup_events = WAKEUP_MAX;
}

static int build_attrs(const struct cs_rec_evopts *o, size_t pages,
		       struct cs_rec_evlist *l)
{
	uint64_t common = CS_ATTR_DISABLED | CS_ATTR_SAMPLE_ID_ALL;
	struct cs_rec_evsel *t;

	if (o->inherit && !o->system_wide)
		common |= CS_ATTR_INHERIT;
	if (o->enable_on_exec)
		common |= CS_ATTR_ENABLE_ON_EXEC;

	for (size_t i = 0; i < o->nr_events; i++) {
		sample_attr(o, &o->events[i], common, pages, &l->evsels[i].attr);
		l->evsels[i].name = strdup(o->events[i].name);
		if (!l->evsels[i].name)
			return -ENOMEM;
	}

	t = &l->evsels[o->nr_events];
	t->tracking = true;
	t->attr.type = CS_PERF_TYPE_SOFTWARE;
	t->attr.config = CS_PERF_COUNT_SW_DUMMY;
	t->attr.sample_period = 1;
	/* the records' sample_id layout is every event's: the bits up to the
	 * raw data are the same for all; the dwarf copies as perf's dummy has
	 * them (the kernel refuses REGS_USER with an empty register mask) */
	t->attr.sample_type = l->evsels[0].attr.sample_type & ~CS_SAMPLE_RAW;
	t->attr.sample_regs_user = l->evsels[0].attr.sample_regs_user;
	t->attr.sample_stack_user = l->evsels[0].attr.sample_stack_user;
	t->attr.flags = common |
			(l->evsels[0].attr.flags & CS_ATTR_EXCLUDE_CALLCHAIN_USER) |
			CS_ATTR_EXCLUDE_KERNEL | CS_ATTR_EXCLUDE_HV |
			CS_ATTR_MMAP | CS_ATTR_MMAP2 | CS_ATTR_COMM |
			CS_ATTR_COMM_EXEC | CS_ATTR_TASK | CS_ATTR_BUILD_ID;
	/* perf 6.1's DWARF unwinder reads .eh_frame_hdr at its address in
	 * the process: the binaries' read-only maps must be known too */
	if (o->callchain && o->dwarf_stack)
		t->attr.flags |= CS_ATTR_MMAP_DATA;
	if (o->switch_events)
		t->attr.flags |= CS_ATTR_CONTEXT_SWITCH;
	if (o->callchain && o->defer)
		t->attr.flags |= CS_ATTR_DEFER_OUTPUT;
	t->name = strdup("dummy:u");
	return t->name ? 0 : -ENOMEM;
}

bool cs_rec_evlist_defer_on(const struct cs_rec_evlist *l)
{
	for (size_t i = 0; i < l->nr_evsels; i++)
		if (l->evsels[i].attr.flags & CS_ATTR_DEFER_CALLCHAIN)
			return true;
	return false;
}

static int open_error(const struct cs_perf_attr *attr, struct cs_errbuf *eb,
		      int err, const char *name, pid_t pid, int cpu)
{
	if (err == -EACCES || err == -EPERM) {
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int level = 99;

		if (f) {
			if (fscanf(f, "%d", &level) != 1)
				level = 99;
			fclose(f);
		}
		return cs_error(eb, err, "no permission to open %s (perf_event_paranoid "
				"is %d): run as root, or lower "
				"/proc/sys/kernel/perf_event_paranoid", name, level);
	}
	if (err == -ESRCH)
		return cs_error(eb, err, "no such process: %d", (int)pid);
	if (err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP)
		return cs_error(eb, err, "the %s event is not supported here", name);
	if (err == -EINVAL && (attr->flags & CS_ATTR_FREQ)) {
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
		unsigned long max = 0;

		if (f) {
			if (fscanf(f, "%lu", &max) != 1)
				max = 0;
			fclose(f);
		}
		if (max && attr->sample_period > max)
			return cs_error(eb, err, "-F %llu is above the kernel's limit of %lu "
					"samples per second "
					"(/proc/sys/kernel/perf_event_max_sample_rate)",
					(unsigned long long)attr->sample_period, max);
	}
	if (err == -EMFILE)
		return cs_error(eb, err, "too many open files opening %s on cpu %d "
				"(raise ulimit -n)", name, cpu);
	return cs_error(eb, err, "perf_event_open(%s, pid %d, cpu %d): %s",
			name, (int)pid, cpu, strerror(-err));
}

/* One open of e on (pid, cpu): its fd, or -errno. The first success
 * settles e's attr: later opens, on the other CPUs and tasks, take it as
 * it is and fall back no further. */
static int open_once(struct cs_rec_evsel *e, pid_t pid, int cpu)
{
	int fd = sys_perf_event_open(&e->attr, pid, cpu);

	if (fd < 0)
		return -errno;
	e->opened = true;
	return fd;
}

/* An event's first open decides its fallbacks; later opens use what it
 * settled. */
static int open_sampling(struct cs_rec_evlist *l, struct cs_rec_evsel *e,
			 pid_t pid, int cpu, struct cs_errbuf *eb)
{
	for (;;) {
		int fd = open_once(e, pid, cpu), err;

		if (fd >= 0)
			return fd;
		err = fd;
		if (e->opened)
			return open_error(&e->attr, eb, err, e->name, pid, cpu);
		if (err == -EINVAL && (e->attr.flags & CS_ATTR_DEFER_CALLCHAIN)) {
			e->attr.flags &= ~CS_ATTR_DEFER_CALLCHAIN;
			l->defer_unsupported = true;
			continue;
		}
		/* perf_event_paranoid >= 2 allows an unprivileged user only
		 * user-space samples of their own tasks: take those, as perf */
		if ((err == -EACCES || err == -EPERM) && pid != -1 &&
		    !(e->attr.flags & CS_ATTR_EXCLUDE_KERNEL)) {
			char *name;

			e->attr.flags |= CS_ATTR_EXCLUDE_KERNEL | CS_ATTR_EXCLUDE_HV;
			l->user_only = true;
			if (asprintf(&name, "%s:u", e->name) < 0)
				return -ENOMEM;
			free(e->name);
			e->name = name;
			continue;
		}
		if ((err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP) &&
		    e->attr.type == CS_PERF_TYPE_HARDWARE &&
		    e->attr.config == CS_PERF_COUNT_HW_CPU_CYCLES) {
			char *name = strdup("cpu-clock");

			if (!name)
				return -ENOMEM;
			e->attr.type = CS_PERF_TYPE_SOFTWARE;
			e->attr.config = CS_PERF_COUNT_SW_CPU_CLOCK;
			free(e->name);
			e->name = name;
			l->fell_back_cpu_clock = true;
			continue;
		}
		return open_error(&e->attr, eb, err, e->name, pid, cpu);
	}
}

static int open_tracking(struct cs_rec_evlist *l, struct cs_rec_evsel *e,
			 pid_t pid, int cpu, struct cs_errbuf *eb)
{
	if (!e->opened && !cs_rec_evlist_defer_on(l))
		e->attr.flags &= ~CS_ATTR_DEFER_OUTPUT;
	for (;;) {
		int fd = open_once(e, pid, cpu), err;

		if (fd >= 0)
			return fd;
		err = fd;
		if (!e->opened && err == -EINVAL && (e->attr.flags & CS_ATTR_BUILD_ID)) {
			e->attr.flags &= ~CS_ATTR_BUILD_ID;
			l->no_build_id = true;
			continue;
		}
		return open_error(&e->attr, eb, err, e->name, pid, cpu);
	}
}

static int event_id(int fd, uint64_t *id, struct cs_errbuf *eb)
{
	if (ioctl(fd, PERF_EVENT_IOC_ID, id) < 0)
		return cs_error(eb, -errno, "PERF_EVENT_IOC_ID: %s", strerror(errno));
	return 0;
}

/* -C: the CPUs asked for, each of which must be online. */
static int choose_cpus(const struct cs_rec_evopts *o, struct cs_rec_evlist *l,
		       struct cs_errbuf *eb)
{
	int *online, n = cs_rec_online_cpus(&online);

	if (n < 0)
		return cs_error(eb, n, "cannot read the online CPUs: %s", strerror(-n));
	if (!o->cpus) {
		l->cpus = online;
		l->nr_cpus = n;
		return 0;
	}
	l->cpus = malloc(o->nr_cpus * sizeof(int));
	if (!l->cpus) {
		free(online);
		return -ENOMEM;
	}
	for (size_t i = 0; i < o->nr_cpus; i++) {
		bool up = false;

		for (int k = 0; k < n && !up; k++)
			up = online[k] == o->cpus[i];
		if (!up) {
			free(online);
			return cs_error(eb, -EINVAL, "-C: cpu %d is not online", o->cpus[i]);
		}
		l->cpus[l->nr_cpus++] = o->cpus[i];
	}
	free(online);
	return 0;
}

/* Opens every event of (cpu c, thread t); the first fd of the CPU maps its
 * ring, the others write into it. Returns 0, -ESRCH when the thread is
 * gone, or a negative errno with eb filled. */
static int open_one(const struct cs_rec_evopts *o, struct cs_rec_evlist *l,
		    int c, size_t t, int *ring_fd, struct cs_errbuf *eb,
		    bool *refused)
{
	pid_t pid = o->system_wide ? -1 : o->threads[t];
	size_t i = (size_t)c * l->nr_threads + t;
	int err;

	for (size_t k = 0; k < l->nr_evsels; k++) {
		struct cs_rec_evsel *e = &l->evsels[k];
		int fd = e->tracking ? open_tracking(l, e, pid, l->cpus[c], eb) :
				       open_sampling(l, e, pid, l->cpus[c], eb);

		if (fd == -ESRCH && !o->system_wide && !k) {
			/* the thread exited since we listed it, or is a main
			 * thread that left before the others (a zombie until
			 * the last one ends) */
			cs_error_clear(eb);
			return -ESRCH;
		}
		if (fd < 0)
			return fd;
		e->fds[i] = fd;
		err = event_id(fd, &e->ids[e->nr_ids], eb);
		if (err)
			return err;
		e->nr_ids++;
		if (*ring_fd < 0) {
			*ring_fd = fd;
			err = cs_ring_mmap(&l->rings[c], fd, l->mmap_pages);
			if (err == -EPERM) {
				*refused = true;
				return cs_error(eb, err, "cannot map the ring of cpu %d "
						"(%zu pages): the locked-memory limit "
						"refuses it: try a smaller -m, or raise "
						"/proc/sys/kernel/perf_event_mlock_kb",
						l->cpus[c], l->mmap_pages);
			}
			if (err)
				return cs_error(eb, err, "cannot map the ring of cpu %d "
						"(%zu pages): %s", l->cpus[c],
						l->mmap_pages, strerror(-err));
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, *ring_fd) < 0) {
			return cs_error(eb, -errno, "PERF_EVENT_IOC_SET_OUTPUT on cpu %d: %s",
					l->cpus[c], strerror(errno));
		}
	}
	return 0;
}

/* One attempt at opening everything with rings of `pages` data pages;
 * *refused tells that the locked-memory limit refused a ring. */
static int evlist_open_pages(const struct cs_rec_evopts *o, size_t pages,
			     struct cs_errbuf *eb, struct cs_rec_evlist **out,
			     bool *refused)
{
	struct cs_rec_evlist *l = calloc(1, sizeof(*l));
	size_t nfd;
	int err;

	*out = NULL;
	*refused = false;
	if (!l)
		return -ENOMEM;
	l->mmap_pages = pages;
	if (!o->nr_events) {
		err = cs_error(eb, -EINVAL, "no event to record");
		goto fail;
	}
	err = choose_cpus(o, l, eb);
	if (err)
		goto fail;
	l->nr_threads = o->system_wide ? 1 : o->nr_threads;
	if (!l->nr_threads) {
		err = cs_error(eb, -EINVAL, "no thread to record");
		goto fail;
	}
	nfd = (size_t)l->nr_cpus * l->nr_threads;
	l->nr_evsels = o->nr_events + 1;
	l->evsels = calloc(l->nr_evsels, sizeof(*l->evsels));
	l->rings = calloc(l->nr_cpus, sizeof(*l->rings));
	err = -ENOMEM;
	if (!l->evsels || !l->rings)
		goto fail;
	for (size_t k = 0; k < l->nr_evsels; k++) {
		l->evsels[k].fds = malloc(nfd * sizeof(int));
		l->evsels[k].ids = calloc(nfd, sizeof(uint64_t));
		if (!l->evsels[k].fds || !l->evsels[k].ids)
			goto fail;
		for (size_t i = 0; i < nfd; i++)
			l->evsels[k].fds[i] = -1;
	}
	for (int c = 0; c < l->nr_cpus; c++)
		l->rings[c].fd = -1;
	err = build_attrs(o, pages, l);
	if (err)
		goto fail;

	for (int c = 0; c < l->nr_cpus; c++) {
		int ring_fd = -1;

		for (size_t t = 0; t < l->nr_threads; t++) {
			err = open_one(o, l, c, t, &ring_fd, eb, refused);
			if (err == -ESRCH)
				continue;
			if (err)
				goto fail;
		}
		if (ring_fd < 0) {
			err = cs_error(eb, -ESRCH, "every target thread has exited");
			goto fail;
		}
	}
	*out = l;
	return 0;
fail:
	if (err == -ENOMEM)
		cs_error(eb, err, "%s", strerror(ENOMEM));
	cs_rec_evlist_free(l);
	return err;
}

int cs_rec_evlist_open(const struct cs_rec_evopts *o, struct cs_errbuf *eb,
		       struct cs_rec_evlist **out)
{
	size_t pages = o->mmap_pages;

	for (;;) {
		bool refused;
		int err = evlist_open_pages(o, pages, eb, out, &refused);

		/* the limit counts every CPU's ring: all of them shrink */
		if (!refused || !o->min_mmap_pages || pages / 2 < o->min_mmap_pages)
			return err;
		cs_error_clear(eb);
		pages /= 2;
	}
}

static int ioctl_all(struct cs_rec_evlist *l, bool sampling, unsigned long req)
{
	size_t n = (size_t)l->nr_cpus * l->nr_threads;
	int err = 0;

	for (size_t k = 0; k < l->nr_evsels; k++) {
		const struct cs_rec_evsel *e = &l->evsels[k];

		if (e->tracking == sampling)
			continue;
		for (size_t i = 0; i < n; i++)
			if (e->fds[i] >= 0 && ioctl(e->fds[i], req, 0) < 0 && !err)
				err = -errno;
	}
	return err;
}

int cs_rec_evlist_enable(struct cs_rec_evlist *l, bool sampling)
{
	return ioctl_all(l, sampling, PERF_EVENT_IOC_ENABLE);
}

int cs_rec_evlist_disable(struct cs_rec_evlist *l, bool sampling)
{
	return ioctl_all(l, sampling, PERF_EVENT_IOC_DISABLE);
}

void cs_rec_evlist_free(struct cs_rec_evlist *l)
{
	size_t n;

	if (!l)
		return;
	n = (size_t)l->nr_cpus * l->nr_threads;
	if (l->rings)
		for (int c = 0; c < l->nr_cpus; c++)
			cs_ring_unmap(&l->rings[c]);
	for (size_t k = 0; l->evsels && k < l->nr_evsels; k++) {
		struct cs_rec_evsel *e = &l->evsels[k];

		for (size_t i = 0; e->fds && i < n; i++)
			if (e->fds[i] >= 0)
				close(e->fds[i]);
		free(e->fds);
		free(e->ids);
		free(e->name);
	}
	free(l->evsels);
	free(l->rings);
	free(l->cpus);
	free(l);
}
