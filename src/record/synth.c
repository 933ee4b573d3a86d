/* synth.c - FORK, COMM and MMAP2 records from /proc. */
#include "record/synth.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/write/encode.h"

static int emit(struct cs_synth *s, long size)
{
	if (size < 0)
		return (int)size;
	s->records++;
	return s->emit(s->ctx, s->buf, (size_t)size);
}

static struct cs_sample_id id_of(const struct cs_synth *s, uint32_t pid, uint32_t tid)
{
	struct cs_sample_id id = { .pid = pid, .tid = tid, .id = s->id };

	return id;
}

int cs_synth_kernel(struct cs_synth *s)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	uint64_t addr, text = 0;
	struct cs_mmap m;
	struct cs_sample_id id;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text") || (!text && !strcmp(name, "_stext"))) {
			text = addr;
			if (!strcmp(name, "_text"))
				break;
		}
	}
	fclose(f);
	if (!text)
		return -ENOENT;
	memset(&m, 0, sizeof(m));
	m.pid = (uint32_t)-1;
	m.start = text;
	m.len = UINT64_MAX - text;
	m.pgoff = text;		/* perf's convention: the relocation symbol's address */
	m.filename = "[kernel.kallsyms]_text";
	id = id_of(s, (uint32_t)-1, 0);
	/* MMAP, as perf writes it: every reader knows this shape */
	return emit(s, cs_encode_mmap(s->attr, &m, CS_MISC_KERNEL, &id, s->buf,
				      sizeof(s->buf)));
}

/* Reads a small /proc file into buf (NUL-terminated); returns its length
 * or -errno. */
static long read_small(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
}

/* The maps of process pid as thread tid sees them. Returns how many it
 * wrote, or a negative errno. */
static int synth_maps(struct cs_synth *s, pid_t pid, pid_t tid)
{
	char path[96], *line = NULL;
	size_t cap = 0;
	FILE *f;
	int err = 0, nr = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)pid, (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;	/* gone, or a kernel thread */
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end, pgoff, ino;
		unsigned maj, min;
		char perm[8];
		int pos = 0;
		struct cs_mmap m;
		struct cs_sample_id id;
		char *name;
		size_t len;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perm, &pgoff, &maj, &min, &ino, &pos) < 7 || !pos)
			continue;
		uint16_t misc = CS_MISC_USER;

		if (perm[2] != 'x') {
			/* samples only land in code, but perf's DWARF unwinder
			 * reads a binary's .eh_frame_hdr where it is mapped */
			if (!s->data_maps || perm[0] != 'r')
				continue;
			misc |= CS_MISC_MMAP_DATA;
		}
		name = line + pos;
		len = strlen(name);
		while (len && (name[len - 1] == '\n' || name[len - 1] == ' '))
			name[--len] = '\0';
		memset(&m, 0, sizeof(m));
		m.pid = m.tid = (uint32_t)pid;
		m.start = start;
		m.len = end - start;
		m.pgoff = pgoff;
		m.maj = maj;
		m.min = min;
		m.ino = ino;
		m.prot = (perm[0] == 'r' ? PROT_READ : 0) |
			 (perm[1] == 'w' ? PROT_WRITE : 0) |
			 (perm[2] == 'x' ? PROT_EXEC : 0);
		m.flags = perm[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		m.filename = len ? name : "//anon";
		id = id_of(s, (uint32_t)pid, (uint32_t)pid);
		err = emit(s, cs_encode_mmap2(s->attr, &m, misc, &id, s->buf,
					      sizeof(s->buf)));
		if (err)
			break;
		nr++;
	}
	free(line);
	fclose(f);
	return err ? err : nr;
}

static int synth_thread(struct cs_synth *s, pid_t pid, pid_t tid, pid_t ppid)
{
	char path[96], comm[64];
	struct cs_fork_exit fk;
	struct cs_comm c;
	struct cs_sample_id id = id_of(s, (uint32_t)pid, (uint32_t)tid);
	long n;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	n = read_small(path, comm, sizeof(comm));
	if (n < 0)
		return 0;	/* the thread exited meanwhile */
	while (n && comm[n - 1] == '\n')
		comm[--n] = '\0';

	/* FORK first: a reader that sees a FORK for a known tid starts the
	 * thread afresh, which would drop a COMM sent before it */
	memset(&fk, 0, sizeof(fk));
	fk.pid = (uint32_t)pid;
	fk.tid = (uint32_t)tid;
	if (pid == tid)
		fk.ppid = fk.ptid = (uint32_t)ppid;
	else
		fk.ppid = fk.ptid = (uint32_t)pid;
	n = cs_encode_fork_exit(s->attr, CS_RECORD_FORK, &fk, &id, s->buf,
				sizeof(s->buf));
	/* as perf marks it: readers take the maps that follow, not the
	 * parent's (stale ones of a parent outside the child's would stay) */
	if (n > 0) {
		struct cs_perf_event_header h;

		memcpy(&h, s->buf, sizeof(h));
		h.misc |= CS_MISC_FORK_EXEC;
		memcpy(s->buf, &h, sizeof(h));
	}
	err = emit(s, n);
	if (err)
		return err;
	c.pid = (uint32_t)pid;
	c.tid = (uint32_t)tid;
	c.comm = comm;
	return emit(s, cs_encode_comm(s->attr, &c, false, &id, s->buf, sizeof(s->buf)));
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[2048], *p;
	long ppid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nPPid:");
	if (!p)
		return 0;
	ppid = strtol(p + 6, NULL, 10);
	return ppid > 0 ? (pid_t)ppid : 0;
}

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

int cs_synth_process(struct cs_synth *s, pid_t pid)
{
	char path[64];
	struct dirent *de;
	pid_t ppid = parent_of(pid), other = 0;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	/* the main thread first, so that its process exists before its threads */
	err = synth_thread(s, pid, pid, ppid);
	while (!err && (de = readdir(d))) {
		long tid;

		if (!is_number(de->d_name))
			continue;
		tid = strtol(de->d_name, NULL, 10);
		if (tid != pid) {
			err = synth_thread(s, pid, (pid_t)tid, ppid);
			other = (pid_t)tid;
		}
	}
	closedir(d);
	if (!err)
		err = synth_maps(s, pid, pid);
	/* a main thread that left before the others has no memory left to
	 * show: the maps are those of a thread still running */
	if (!err && other)
		err = synth_maps(s, pid, other);
	return err < 0 ? err : 0;
}

int cs_synth_all(struct cs_synth *s)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d)))
		if (is_number(de->d_name))
			err = cs_synth_process(s, (pid_t)strtol(de->d_name, NULL, 10));
	closedir(d);
	return err;
}
