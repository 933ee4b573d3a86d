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
#include "lib/util/errbuf.h"

static const struct cs_rec_event known_events[] = {
	{ "cycles",       CS_PERF_TYPE_HARDWARE, CS_PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles",   CS_PERF_TYPE_HARDWARE, CS_PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", CS_PERF_TYPE_HARDWARE, CS_PERF_COUNT_HW_INSTRUCTIONS },
	{ "cpu-clock",    CS_PERF_TYPE_SOFTWARE, CS_PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock",   CS_PERF_TYPE_SOFTWARE, CS_PERF_COUNT_SW_TASK_CLOCK },
};

int cs_rec_event_parse(const char *s, struct cs_rec_event *out)
{
	for (size_t i = 0; i < sizeof(known_events) / sizeof(known_events[0]); i++)
		if (!strcmp(s, known_events[i].name)) {
			*out = known_events[i];
			return 0;
		}
	return -EINVAL;
}

int cs_rec_online_cpus(int **cpus)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int *v = NULL, n = 0, cap = 0;
	unsigned a, b;
	char sep;

	*cpus = NULL;
	if (!f)
		return -errno;
	/* "0-3,5,7-8\n" */
	while (fscanf(f, "%u", &a) == 1) {
		b = a;
		sep = (char)fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%u", &b) != 1 || b < a)
				break;
			sep = (char)fgetc(f);
		}
		for (unsigned c = a; c <= b; c++) {
			if (n == cap) {
				int *nv;

				cap = cap ? cap * 2 : 8;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					fclose(f);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = (int)c;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
	if (!n) {
		free(v);
		return -EINVAL;
	}
	*cpus = v;
	return n;
}

static int sys_perf_event_open(struct cs_perf_attr *attr, pid_t pid, int cpu)
{
	/* 128 bytes: every field we set lives there, and every kernel since
	 * 5.x knows that size */
	attr->size = CS_PERF_ATTR_SIZE_VER7;
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

static void build_attrs(const struct cs_rec_evopts *o, size_t pages,
			struct cs_rec_evlist *l)
{
	struct cs_perf_attr *s = &l->sample_attr, *t = &l->track_attr;
	uint64_t common = CS_ATTR_DISABLED | CS_ATTR_SAMPLE_ID_ALL;

	if (o->inherit && !o->system_wide)
		common |= CS_ATTR_INHERIT;
	if (o->enable_on_exec)
		common |= CS_ATTR_ENABLE_ON_EXEC;

	memset(s, 0, sizeof(*s));
	s->type = o->event.type;
	s->config = o->event.config;
	s->sample_period = o->period;
	s->sample_type = CS_SAMPLE_IDENTIFIER | CS_SAMPLE_IP | CS_SAMPLE_TID |
			 CS_SAMPLE_TIME | CS_SAMPLE_CPU | CS_SAMPLE_PERIOD;
	if (o->callchain)
		s->sample_type |= CS_SAMPLE_CALLCHAIN;
	s->flags = common | CS_ATTR_WATERMARK;
	if (o->freq)
		s->flags |= CS_ATTR_FREQ;
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
	/* wake the reader when a quarter of the ring is used (wakeup_watermark,
	 * in bytes): the rest absorbs the reader's scheduling delays */
	s->wakeup_events = (uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	l->sample_name = o->event.name;

	memset(t, 0, sizeof(*t));
	t->type = CS_PERF_TYPE_SOFTWARE;
	t->config = CS_PERF_COUNT_SW_DUMMY;
	t->sample_period = 1;
	/* the same layout, dwarf copies included, as perf's dummy: the
	 * kernel refuses REGS_USER with an empty register mask */
	t->sample_type = s->sample_type;
	t->sample_regs_user = s->sample_regs_user;
	t->sample_stack_user = s->sample_stack_user;
	t->flags = common | (s->flags & CS_ATTR_EXCLUDE_CALLCHAIN_USER) |
		   CS_ATTR_EXCLUDE_KERNEL | CS_ATTR_EXCLUDE_HV |
		   CS_ATTR_MMAP | CS_ATTR_MMAP2 | CS_ATTR_COMM |
		   CS_ATTR_COMM_EXEC | CS_ATTR_TASK | CS_ATTR_BUILD_ID;
	if (o->callchain && o->defer)
		t->flags |= CS_ATTR_DEFER_OUTPUT;
	/* perf 6.1's DWARF unwinder reads .eh_frame_hdr at its address in
	 * the process: the binaries' read-only maps must be known too */
	if (o->callchain && o->dwarf_stack)
		t->flags |= CS_ATTR_MMAP_DATA;
	l->track_name = "dummy:u";
}

static int open_error(const struct cs_rec_evlist *l, struct cs_errbuf *eb,
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
	if (err == -EINVAL && (l->sample_attr.flags & CS_ATTR_FREQ)) {
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
		unsigned long max = 0;

		if (f) {
			if (fscanf(f, "%lu", &max) != 1)
				max = 0;
			fclose(f);
		}
		if (max && l->sample_attr.sample_period > max)
			return cs_error(eb, err, "-F %llu is above the kernel's limit of %lu "
					"samples per second "
					"(/proc/sys/kernel/perf_event_max_sample_rate)",
					(unsigned long long)l->sample_attr.sample_period, max);
	}
	if (err == -EMFILE)
		return cs_error(eb, err, "too many open files opening %s on cpu %d "
				"(raise ulimit -n)", name, cpu);
	return cs_error(eb, err, "perf_event_open(%s, pid %d, cpu %d): %s",
			name, (int)pid, cpu, strerror(-err));
}

/* The first open decides the fallbacks; later opens use what it settled. */
static int open_sampling(struct cs_rec_evlist *l, pid_t pid, int cpu, bool first,
			 struct cs_errbuf *eb)
{
	for (;;) {
		int fd = sys_perf_event_open(&l->sample_attr, pid, cpu);
		int err = -errno;

		if (fd >= 0) {
			if (first && l->user_only) {
				snprintf(l->name_buf, sizeof(l->name_buf), "%s:u",
					 l->sample_name);
				l->sample_name = l->name_buf;
			}
			return fd;
		}
		if (!first)
			return open_error(l, eb, err, l->sample_name, pid, cpu);
		if (err == -EINVAL && (l->sample_attr.flags & CS_ATTR_DEFER_CALLCHAIN)) {
			l->sample_attr.flags &= ~CS_ATTR_DEFER_CALLCHAIN;
			l->track_attr.flags &= ~CS_ATTR_DEFER_OUTPUT;
			l->defer_unsupported = true;
			continue;
		}
		/* perf_event_paranoid >= 2 allows an unprivileged user only
		 * user-space samples of their own tasks: take those, as perf */
		if ((err == -EACCES || err == -EPERM) && pid != -1 &&
		    !(l->sample_attr.flags & CS_ATTR_EXCLUDE_KERNEL)) {
			l->sample_attr.flags |= CS_ATTR_EXCLUDE_KERNEL | CS_ATTR_EXCLUDE_HV;
			l->user_only = true;
			continue;
		}
		if ((err == -ENOENT || err == -ENODEV || err == -EOPNOTSUPP) &&
		    l->sample_attr.type == CS_PERF_TYPE_HARDWARE &&
		    l->sample_attr.config == CS_PERF_COUNT_HW_CPU_CYCLES) {
			l->sample_attr.type = CS_PERF_TYPE_SOFTWARE;
			l->sample_attr.config = CS_PERF_COUNT_SW_CPU_CLOCK;
			l->sample_name = "cpu-clock";
			l->fell_back_cpu_clock = true;
			continue;
		}
		return open_error(l, eb, err, l->sample_name, pid, cpu);
	}
}

static int open_tracking(struct cs_rec_evlist *l, pid_t pid, int cpu, bool first,
			 struct cs_errbuf *eb)
{
	for (;;) {
		int fd = sys_perf_event_open(&l->track_attr, pid, cpu);
		int err = -errno;

		if (fd >= 0)
			return fd;
		if (first && err == -EINVAL && (l->track_attr.flags & CS_ATTR_BUILD_ID)) {
			l->track_attr.flags &= ~CS_ATTR_BUILD_ID;
			l->no_build_id = true;
			continue;
		}
		return open_error(l, eb, err, l->track_name, pid, cpu);
	}
}

static int event_id(int fd, uint64_t *id, struct cs_errbuf *eb)
{
	if (ioctl(fd, PERF_EVENT_IOC_ID, id) < 0)
		return cs_error(eb, -errno, "PERF_EVENT_IOC_ID: %s", strerror(errno));
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
	bool first = true;
	int err;

	*out = NULL;
	*refused = false;
	if (!l)
		return -ENOMEM;
	l->mmap_pages = pages;
	l->nr_cpus = cs_rec_online_cpus(&l->cpus);
	if (l->nr_cpus < 0) {
		err = cs_error(eb, l->nr_cpus, "cannot read the online CPUs: %s",
			       strerror(-l->nr_cpus));
		l->nr_cpus = 0;
		goto fail;
	}
	l->nr_threads = o->system_wide ? 1 : o->nr_threads;
	if (!l->nr_threads) {
		err = cs_error(eb, -EINVAL, "no thread to record");
		goto fail;
	}
	nfd = (size_t)l->nr_cpus * l->nr_threads;
	l->sample_fds = malloc(nfd * sizeof(int));
	l->track_fds = malloc(nfd * sizeof(int));
	l->sample_ids = calloc(nfd, sizeof(uint64_t));
	l->track_ids = calloc(nfd, sizeof(uint64_t));
	l->rings = calloc(l->nr_cpus, sizeof(*l->rings));
	if (!l->sample_fds || !l->track_fds || !l->sample_ids || !l->track_ids ||
	    !l->rings) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < nfd; i++)
		l->sample_fds[i] = l->track_fds[i] = -1;
	for (int c = 0; c < l->nr_cpus; c++)
		l->rings[c].fd = -1;
	build_attrs(o, pages, l);

	for (int c = 0; c < l->nr_cpus; c++) {
		int ring_fd = -1;

		for (size_t t = 0; t < l->nr_threads; t++) {
			pid_t pid = o->system_wide ? -1 : o->threads[t];
			size_t i = (size_t)c * l->nr_threads + t;
			int fd;

			fd = open_sampling(l, pid, l->cpus[c], first, eb);
			if (fd < 0 && fd == -ESRCH && !first && !o->system_wide) {
				/* the thread exited since we listed it */
				cs_error_clear(eb);
				continue;
			}
			if (fd < 0) {
				err = fd;
				goto fail;
			}
			l->sample_fds[i] = fd;
			fd = open_tracking(l, pid, l->cpus[c], first, eb);
			if (fd < 0) {
				err = fd;
				goto fail;
			}
			l->track_fds[i] = fd;
			first = false;

			err = event_id(l->sample_fds[i], &l->sample_ids[l->nr_sample_ids], eb);
			if (err)
				goto fail;
			l->nr_sample_ids++;
			err = event_id(l->track_fds[i], &l->track_ids[l->nr_track_ids], eb);
			if (err)
				goto fail;
			l->nr_track_ids++;

			if (ring_fd < 0) {
				ring_fd = l->sample_fds[i];
				err = cs_ring_mmap(&l->rings[c], ring_fd, pages);
				if (err == -EPERM) {
					*refused = true;
					err = cs_error(eb, err, "cannot map the ring of cpu %d "
						       "(%zu pages): the locked-memory limit "
						       "refuses it: try a smaller -m, or raise "
						       "/proc/sys/kernel/perf_event_mlock_kb",
						       l->cpus[c], pages);
					goto fail;
				}
				if (err) {
					err = cs_error(eb, err, "cannot map the ring of cpu %d "
						       "(%zu pages): %s", l->cpus[c],
						       pages, strerror(-err));
					goto fail;
				}
			} else if (ioctl(l->sample_fds[i], PERF_EVENT_IOC_SET_OUTPUT, ring_fd) < 0) {
				err = cs_error(eb, -errno, "PERF_EVENT_IOC_SET_OUTPUT on cpu %d: %s",
					       l->cpus[c], strerror(errno));
				goto fail;
			}
			if (ioctl(l->track_fds[i], PERF_EVENT_IOC_SET_OUTPUT, ring_fd) < 0) {
				err = cs_error(eb, -errno, "PERF_EVENT_IOC_SET_OUTPUT on cpu %d: %s",
					       l->cpus[c], strerror(errno));
				goto fail;
			}
		}
		if (ring_fd < 0) {
			err = cs_error(eb, -ESRCH, "every target thread has exited");
			goto fail;
		}
	}
	*out = l;
	return 0;
fail:
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
	int *fds = sampling ? l->sample_fds : l->track_fds;
	size_t n = (size_t)l->nr_cpus * l->nr_threads;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0 && ioctl(fds[i], req, 0) < 0 && !err)
			err = -errno;
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
	for (size_t i = 0; l->sample_fds && i < n; i++)
		if (l->sample_fds[i] >= 0)
			close(l->sample_fds[i]);
	for (size_t i = 0; l->track_fds && i < n; i++)
		if (l->track_fds[i] >= 0)
			close(l->track_fds[i]);
	free(l->sample_fds);
	free(l->track_fds);
	free(l->sample_ids);
	free(l->track_ids);
	free(l->rings);
	free(l->cpus);
	free(l);
}
