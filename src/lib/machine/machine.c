/* machine.c - threads, processes and address resolution.
 *
 * Threads are keyed by tid (their comm), processes by pid (their maps):
 * threads of one process share its maps because they share its pid. An
 * exited thread is kept: samples of its last kernel entry are delivered
 * after its EXIT and still need its name. Resolution goes through a
 * direct-mapped cache keyed by (address space, address); an address space
 * gets a new number whenever its maps change, so the cache never needs
 * flushing and never answers for stale maps.
 */
#include "lib/machine/machine.h"
#include "lib/machine/dso.h"
#include "lib/machine/maps.h"
#include "lib/symbols/symcache.h"
#include "lib/symbols/symtab.h"
#include "lib/util/grow.h"
#include "lib/util/hash.h"
#include "lib/util/pool.h"
#include "lib/util/strset.h"
#include "lib/util/tasks.h"
#include "lib/util/u32map.h"
#include "abi/perf_abi.h"

_Static_assert(CS_MISC_KERNEL == 1 && CS_MISC_GUEST_KERNEL == 4 &&
	       CS_MISC_CPUMODE_UNKNOWN == 0,
	       "cs_machine_is_kernel() spells the modes out");

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CACHE_BITS 14
#define KSYMBOL_UNREGISTER 1

struct thread {
	uint32_t pid, tid;
	const char *comm;		/* interned */
	bool exited;
	uint64_t exit_time;
};

struct proc {
	uint32_t pid;
	struct cs_maps maps;
};

struct known_id {			/* build ids from the file's header */
	char *path;
	size_t path_len;
	uint8_t id[20];
	uint8_t size;
	bool kernel;			/* the kernel's or a module's */
};

struct recent_id {
	void *val;			/* NULL: empty */
	uint32_t key;
};

struct cache_ent {
	uint64_t space, addr;
	struct cs_location loc;
};

struct ksym {				/* a KSYMBOL (BPF program, ...) */
	uint64_t addr, len;
	const char *name;		/* in ksym_names */
};

struct cs_machine {
	struct cs_u32map threads, procs;
	struct cs_pool task_pool;	/* the struct thread and struct proc
					 * values of the two maps: they live
					 * as long as m, and end together */
	struct cs_dso_table *dsos;
	struct cs_strset comms;		/* interned command names */
	struct known_id *ids;
	size_t nr_ids, cap_ids;
	struct ksym *ksyms;		/* sorted by addr */
	struct cs_strset ksym_names;	/* their names, kept after an
					 * unregister: a location handed out
					 * before still points at one */
	size_t nr_ksyms, cap_ksyms;
	struct cs_symtab *kernel;	/* kallsyms, loaded on first use */
	bool kernel_tried;
	/* loading ahead (cs_machine_preload()): the workers, and the kernel's
	 * symbols once its map is known, when the header lists it */
	unsigned int preload_workers;	/* 0: none */
	bool preload_inlines;
	struct cs_tasks *tasks;
	bool kernel_wanted;
	struct kernel_job *kjob;
	char *kallsyms_path;		/* --kallsyms, or NULL: looked for */
	char kallsyms_error[256];	/* why it gave no symbols, or "" */
	uint64_t next_space;
	uint64_t kernel_space;
	uint64_t kernel_text;		/* _text as recorded (its pgoff), or 0 */
	uint64_t kernel_start;		/* the [kernel.kallsyms] map; */
	uint64_t kernel_end;		/* both 0: not in the file */
	struct cache_ent *cache;
	/* the processes and threads last asked about, the latest first: a
	 * sample's frames are resolved one by one in the same process, and
	 * a system-wide profile's samples take turns between the CPUs, so
	 * that the one before the last is as often the one asked for (97% of
	 * a real profile's samples). Neither is freed before m. */
	struct recent_id last_procs[2], last_threads[2];
};

static void kernel_ahead(struct cs_machine *m);
static void kernel_job_free(struct kernel_job *k);

/* ---- small containers -------------------------------------------------- */

static const char *intern(struct cs_machine *m, const char *s)
{
	/* a profile may name thousands of threads: hashed, not scanned */
	return cs_strset_intern(&m->comms, s);
}

/* ---- life ----------------------------------------------------------------- */

static bool recorded_here(const struct cs_machine_opts *o)
{
	struct utsname u;

	if (!o->hostname || !o->os_release)
		return true;		/* nothing says otherwise */
	if (uname(&u))
		return false;
	return !strcmp(u.nodename, o->hostname) && !strcmp(u.release, o->os_release);
}

int cs_machine_new(const struct cs_machine_opts *o, struct cs_machine **out)
{
	static const struct cs_machine_opts none;
	struct cs_dso_table_opts dopts = { 0 };
	struct cs_machine *m;

	if (!o)
		o = &none;
	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	dopts.symfs = o->symfs;
	dopts.archive = o->archive;
	dopts.sysroot = o->sysroot;
	dopts.jit_map = o->jit_map;
	dopts.local = recorded_here(o);
	dopts.debuginfod = !o->no_debuginfod;
	dopts.hooks = o->hooks;
	m->preload_workers = o->preload_workers;
	m->preload_inlines = o->preload_inlines;
	m->cache = calloc(1u << CACHE_BITS, sizeof(*m->cache));
	if (!m->cache || cs_dso_table_new(&dopts, &m->dsos))
		goto nomem;
	if (o->kallsyms && !(m->kallsyms_path = strdup(o->kallsyms)))
		goto nomem;
	m->next_space = 2;
	m->kernel_space = 1;
	*out = m;
	return 0;
nomem:
	cs_machine_free(m);
	return -ENOMEM;
}

static void free_proc(void *p)
{
	struct proc *pr = p;

	cs_maps_clear(&pr->maps);
}

void cs_machine_free(struct cs_machine *m)
{
	if (!m)
		return;
	/* first: saves still queued read the tables freed below */
	cs_tasks_finish(m->tasks);
	kernel_job_free(m->kjob);
	cs_u32map_free(&m->threads, NULL);
	cs_u32map_free(&m->procs, free_proc);
	cs_pool_free(&m->task_pool);
	cs_dso_table_free(m->dsos);
	cs_strset_free(&m->comms);
	for (size_t i = 0; i < m->nr_ids; i++)
		free(m->ids[i].path);
	free(m->ids);
	cs_strset_free(&m->ksym_names);
	free(m->ksyms);
	cs_symtab_free(m->kernel);
	free(m->kallsyms_path);
	free(m->cache);
	free(m);
}

int cs_machine_add_build_id(struct cs_machine *m, const char *path,
			    const uint8_t *build_id, size_t size, bool kernel)
{
	struct known_id *k;

	if (size > 20)
		size = 20;
	if (m->nr_ids == m->cap_ids) {
		size_t cap = m->cap_ids ? m->cap_ids * 2 : 32;

		k = realloc(m->ids, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		m->ids = k;
		m->cap_ids = cap;
	}
	k = &m->ids[m->nr_ids];
	k->path = strdup(path);
	if (!k->path)
		return -ENOMEM;
	k->path_len = strlen(path);
	memcpy(k->id, build_id, size);
	k->size = (uint8_t)size;
	k->kernel = kernel;
	m->nr_ids++;
	return 0;
}

/* ---- side-band events --------------------------------------------------- */

/* map's value of key; when there is none, a new one of size bytes,
 * zeroed, from m's pool of tasks (*created set). NULL without memory. */
static void *task_findnew(struct cs_machine *m, struct cs_u32map *map,
			  uint32_t key, size_t size, bool *created)
{
	void *val = cs_u32map_get(map, key);

	*created = false;
	if (val)
		return val;
	/* a piece the map could not take stays the pool's, unused */
	val = cs_pool_zalloc(&m->task_pool, size);
	if (!val || cs_u32map_put(map, key, val))
		return NULL;
	*created = true;
	return val;
}

static struct thread *thread_findnew(struct cs_machine *m, uint32_t pid,
				     uint32_t tid)
{
	bool created;
	struct thread *t = task_findnew(m, &m->threads, tid, sizeof(*t),
					&created);

	if (t && created) {
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

static struct proc *proc_findnew(struct cs_machine *m, uint32_t pid)
{
	bool created;
	struct proc *p = task_findnew(m, &m->procs, pid, sizeof(*p), &created);

	if (p && created) {
		p->pid = pid;
		p->maps.space = m->next_space++;
	}
	return p;
}

/* h's value of key, looked for first among the two last found (last[0]
 * the latest). A value's pointer never changes while h lives. */
static void *u32map_get_recent(const struct cs_u32map *h, struct recent_id *last,
			       uint32_t key)
{
	struct recent_id r;

	if (last[0].key == key && last[0].val)
		return last[0].val;
	if (last[1].key == key && last[1].val) {
		r = last[1];
	} else {
		r.key = key;
		r.val = cs_u32map_get(h, key);
		if (!r.val)
			return NULL;
	}
	last[1] = last[0];
	last[0] = r;
	return r.val;
}

static struct proc *proc_get(struct cs_machine *m, uint32_t pid)
{
	return u32map_get_recent(&m->procs, m->last_procs, pid);
}

static struct thread *thread_get(struct cs_machine *m, uint32_t tid)
{
	return u32map_get_recent(&m->threads, m->last_threads, tid);
}

static int on_comm(struct cs_machine *m, const struct cs_event *ev)
{
	struct thread *t = thread_findnew(m, ev->comm.pid, ev->comm.tid);
	const char *c;

	if (!t)
		return -ENOMEM;
	c = intern(m, ev->comm.comm ? ev->comm.comm : "");
	if (!c)
		return -ENOMEM;
	t->comm = c;
	t->pid = ev->comm.pid;
	t->exited = false;
	/* exec keeps the maps, as perf does: samples later in the execve
	 * call still carry the old image's user stack, and the new image's
	 * MMAPs replace what they overlap */
	return 0;
}

static int on_fork(struct cs_machine *m, const struct cs_event *ev)
{
	const struct cs_fork_exit *f = &ev->fork;
	struct thread *parent = cs_u32map_get(&m->threads, f->ptid);
	struct thread *t;

	t = cs_u32map_get(&m->threads, f->tid);
	if (!t) {
		t = thread_findnew(m, f->pid, f->tid);
		if (!t)
			return -ENOMEM;
	}
	/* a reused tid starts over from its parent */
	t->pid = f->pid;
	t->exited = false;
	t->comm = parent ? parent->comm : NULL;
	if (f->pid != f->ppid) {
		struct proc *pp = cs_u32map_get(&m->procs, f->ppid);
		struct proc *p = proc_findnew(m, f->pid);

		if (!p)
			return -ENOMEM;
		p->maps.space = m->next_space++;
		if (pp && !(ev->misc & CS_MISC_FORK_EXEC)) {
			if (cs_maps_copy(&p->maps, &pp->maps))
				return -ENOMEM;
		} else {
			p->maps.nr = 0;
		}
	}
	return 0;
}

/* The first build id the header lists for path (len bytes). Every MMAP
 * asks (a system-wide profile has thousands), and the paths differ in
 * length more often than in their first bytes, which are "/usr/lib/". */
static void known_build_id_len(const struct cs_machine *m, const char *path,
			       size_t len, const uint8_t **id, size_t *size)
{
	for (size_t i = 0; i < m->nr_ids; i++)
		if (m->ids[i].path_len == len &&
		    !memcmp(m->ids[i].path, path, len)) {
			*id = m->ids[i].id;
			*size = m->ids[i].size;
			return;
		}
}

static void known_build_id(const struct cs_machine *m, const char *path,
			   const uint8_t **id, size_t *size)
{
	known_build_id_len(m, path, strlen(path), id, size);
}

/* perf's rule for anonymous and file-less executable maps */
static bool jit_candidate(const struct cs_event *ev)
{
	const struct cs_mmap *mm = &ev->mmap;
	const char *f = mm->filename;
	bool exec, anon, no_dso;

	if (ev->type == CS_RECORD_MMAP2)
		exec = mm->prot & PROT_EXEC;
	else
		exec = !(ev->misc & CS_MISC_MMAP_DATA);
	anon = !strcmp(f, "//anon") || !strncmp(f, "/dev/zero", 9) ||
	       !strncmp(f, "/anon_hugepage", 14) || (mm->flags & MAP_HUGETLB);
	no_dso = !strncmp(f, "[stack", 6) || !strncmp(f, "/SYSV", 5) ||
		 !strcmp(f, "[heap]");
	return exec && (anon || no_dso);
}

static int on_mmap(struct cs_machine *m, const struct cs_event *ev)
{
	const struct cs_mmap *mm = &ev->mmap;
	const char *name;
	char jit[64];
	uint64_t pgoff;
	uint8_t mode = ev->misc & CS_MISC_CPUMODE_MASK;
	const uint8_t *id = NULL;
	size_t id_size = 0, name_len;
	struct cs_dso *dso;
	struct proc *p;

	/* kernel and module maps: kallsyms already say where symbols are;
	 * the kernel map's start bounds what counts as kernel text */
	if (mode == CS_MISC_KERNEL || mode == CS_MISC_GUEST_KERNEL ||
	    mm->pid == UINT32_MAX || !mm->filename) {
		if (mode == CS_MISC_KERNEL && mm->filename &&
		    !strncmp(mm->filename, "[kernel.kallsyms]", 17)) {
			m->kernel_start = mm->start;
			/* perf's convention: the map's pgoff is _text's address
			 * (an "_stext" map's is _stext's, not comparable) */
			if (!strcmp(mm->filename, "[kernel.kallsyms]_text"))
				m->kernel_text = mm->pgoff;
			m->kernel_end = mm->len && mm->start + mm->len > mm->start ?
					mm->start + mm->len : UINT64_MAX;
			m->kernel_space = m->next_space++;
			/* _text is known now: the list can be checked */
			if (m->kernel_wanted)
				kernel_ahead(m);
		}
		return 0;
	}
	name = mm->filename;
	pgoff = mm->pgoff;
	if (jit_candidate(ev)) {
		/* executable memory without a file: JIT code, whose symbols a
		 * runtime may list in /tmp/perf-PID.map; its addresses are
		 * their own offsets */
		snprintf(jit, sizeof(jit), "/tmp/perf-%u.map", mm->pid);
		name = jit;
		pgoff = mm->start;
	}
	name_len = strlen(name);
	if (mm->has_build_id) {
		id = mm->build_id;
		id_size = mm->build_id_size;
	} else {
		known_build_id_len(m, name, name_len, &id, &id_size);
	}
	dso = cs_dso_findnew(m->dsos, name, name_len, id, id_size);
	p = proc_findnew(m, mm->pid);
	if (!dso || !p)
		return -ENOMEM;
	p->maps.space = m->next_space++;
	/* the kernel (and perf's and our /proc synthesis) marks every map
	 * without VM_EXEC so, MMAP2 too, whose prot a writer may leave 0 */
	return cs_maps_insert(&p->maps, mm->start, mm->len, pgoff, dso,
			      !(ev->misc & CS_MISC_MMAP_DATA));
}

/* The index of the first KSYMBOL at or above addr */
static size_t ksym_lower_bound(const struct cs_machine *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nr_ksyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->ksyms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int on_ksymbol(struct cs_machine *m, const struct cs_event *ev)
{
	const struct cs_ksymbol *k = &ev->ksymbol;
	size_t i = ksym_lower_bound(m, k->addr);
	const char *name;

	m->kernel_space = m->next_space++;
	if (i < m->nr_ksyms && m->ksyms[i].addr == k->addr) {
		memmove(&m->ksyms[i], &m->ksyms[i + 1],
			(m->nr_ksyms - i - 1) * sizeof(*m->ksyms));
		m->nr_ksyms--;
	}
	if (k->flags & KSYMBOL_UNREGISTER)
		return 0;
	name = cs_strset_intern(&m->ksym_names, k->name ? k->name : "");
	if (!name || cs_grow((void **)&m->ksyms, &m->cap_ksyms, m->nr_ksyms + 1,
			     sizeof(*m->ksyms)))
		return -ENOMEM;
	memmove(&m->ksyms[i + 1], &m->ksyms[i],
		(m->nr_ksyms - i) * sizeof(*m->ksyms));
	m->ksyms[i] = (struct ksym){ k->addr, k->len, name };
	m->nr_ksyms++;
	return 0;
}

int cs_machine_event(struct cs_machine *m, const struct cs_event *ev)
{
	switch (ev->type) {
	case CS_RECORD_COMM:
		return on_comm(m, ev);
	case CS_RECORD_FORK:
		return on_fork(m, ev);
	case CS_RECORD_MMAP:
	case CS_RECORD_MMAP2:
		return on_mmap(m, ev);
	case CS_RECORD_KSYMBOL:
		return on_ksymbol(m, ev);
	case CS_RECORD_EXIT: {
		/* the thread stays: samples of its last kernel entry come
		 * after its EXIT and still want its name */
		struct thread *t = cs_u32map_get(&m->threads, ev->fork.tid);

		if (t && !t->exited) {
			t->exited = true;
			t->exit_time = ev->fork.time ? ev->fork.time : ev->id.time;
		}
		return 0;
	}
	}
	return 0;
}

static const char *thread_comm(const struct thread *t, uint32_t tid)
{
	if (t && t->comm)
		return t->comm;
	return tid == 0 ? "swapper" : NULL;	/* the idle task has no COMM */
}

const char *cs_machine_comm(struct cs_machine *m, uint32_t pid, uint32_t tid)
{
	(void)pid;
	return thread_comm(cs_u32map_get(&m->threads, tid), tid);
}

const char *cs_machine_comm_at(struct cs_machine *m, uint32_t pid, uint32_t tid,
			       uint64_t time)
{
	const struct thread *t = thread_get(m, tid);

	(void)pid;
	if (t && t->exited && time > t->exit_time)
		return NULL;
	return thread_comm(t, tid);
}

/* ---- resolution ----------------------------------------------------------- */

/* What loading the kernel's symbols makes, kept apart from the machine so
 * that a worker can make it ahead (struct kernel_job). */
struct kernel_load {
	char *path;			/* the list read (found, or given) */
	struct cs_symtab *table;
	char *key;			/* table to be saved under it, or NULL */
	int open_errno;			/* path could not be opened */
	char error[256];		/* why it gave no symbols, or "" */
};

/* The kernel's symbols loaded ahead of the first kernel address, with
 * what they were looked for by: taken only if the machine would still
 * look for them so (the profile's kernel map may come again, moved). */
struct kernel_job {
	struct cs_task task;
	struct cs_dso_table *dsos;	/* only its immutable lookup options */
	char *given;			/* --kallsyms, or NULL */
	uint8_t id[20];
	size_t id_size;
	uint64_t text;
	struct kernel_load out;
};

/* The kernel's symbol list by its build id (symfs, this host's
 * /proc/kallsyms when recorded here, the build-id cache) and _text as
 * recorded; then its symbols, from the cache for the running kernel's.
 * Touches nothing shared: a worker runs it. */
static void kernel_load(struct cs_dso_table *dsos, const char *given,
			const uint8_t *id, size_t id_size, uint64_t text,
			struct kernel_load *out)
{
	struct stat st;
	size_t bad = 0;
	char *buf = NULL;
	size_t len = 0;
	int fd, r;
	char key[512], path[4096];
	bool running;
	long added = 0;

	if (!given) {
		r = cs_dso_table_find_kallsyms(dsos, id, id_size, text, path,
					       sizeof(path));
		if (r == -EMEDIUMTYPE)
			snprintf(out->error, sizeof(out->error),
				 "the kernel's symbols found are another boot's (its _text "
				 "is not at %#" PRIx64 ", as recorded): kernel frames are "
				 "left unknown; record with --buildid-cache to keep them",
				 text);
		if (r <= 0)
			return;
		given = path;
	}
	if (!(out->path = strdup(given)))
		return;
	/* the running kernel's table is kept between runs (symcache.h) */
	running = !strcmp(out->path, "/proc/kallsyms") &&
		  !cs_symcache_kernel_key(key, sizeof(key));
	if (running && !cs_symcache_open(key, &out->table))
		return;
	if (cs_symtab_new(&out->table))
		return;
	fd = open(out->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		out->open_errno = errno;
		return;
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED) {
			added = cs_kallsyms_parse(out->table, p, (size_t)st.st_size, &bad);
			munmap(p, (size_t)st.st_size);
			goto done;
		}
	}
	/* /proc files report size 0 and come a page per read: grow the
	 * buffer geometrically, never per read */
	for (size_t cap = 0;;) {
		ssize_t n;

		if (cap - len < 65536) {
			char *nb = realloc(buf, cap ? cap * 2 : 4u << 20);

			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 4u << 20;
		}
		n = read(fd, buf + len, cap - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	added = cs_kallsyms_parse(out->table, buf ? buf : "", len, &bad);
	free(buf);
done:
	close(fd);
	if (added == -EBADMSG)
		snprintf(out->error, sizeof(out->error),
			 "%s: line %zu is not 'ADDRESS TYPE NAME [MODULE]'",
			 out->path, bad);
	else if (added == 0)
		snprintf(out->error, sizeof(out->error),
			 "%s: no symbol addresses (kptr_restrict?)", out->path);
	if (cs_symtab_finish(out->table) || !cs_symtab_count(out->table)) {
		cs_symtab_free(out->table);
		out->table = NULL;
	} else if (running) {
		out->key = strdup(key);
		if (!out->key)		/* no memory to wait: save it now */
			cs_symcache_store(key, out->table);
	}
}

static void kernel_job_run(struct cs_task *task)
{
	struct kernel_job *k = (struct kernel_job *)task;

	kernel_load(k->dsos, k->given, k->id, k->id_size, k->text, &k->out);
}

static void kernel_job_free(struct kernel_job *k)
{
	if (!k)
		return;
	free(k->given);
	free(k->out.path);
	cs_symtab_free(k->out.table);
	free(k->out.key);
	free(k);
}

/* Has a worker load the kernel's symbols as load_kernel() would now. */
static void kernel_ahead(struct cs_machine *m)
{
	const uint8_t *id = NULL;
	size_t size = 0;
	struct kernel_job *k;

	if (!m->tasks || m->kjob || m->kernel_tried)
		return;
	k = calloc(1, sizeof(*k));
	if (!k || (m->kallsyms_path && !(k->given = strdup(m->kallsyms_path)))) {
		free(k);
		return;
	}
	known_build_id(m, "[kernel.kallsyms]", &id, &size);
	memcpy(k->id, id, size);
	k->id_size = size;
	k->text = m->kernel_text;
	k->dsos = m->dsos;
	k->task.run = kernel_job_run;
	m->kjob = k;
	/* the kernel's list is the biggest, and kernel frames come first */
	cs_tasks_add(m->tasks, &k->task, true);
}

/* The worker's kernel_load(), if it looked with what the machine would
 * look with now: claimed (run here, or waited for) and moved to out. */
static bool kernel_from_job(struct cs_machine *m, struct kernel_load *out)
{
	struct kernel_job *k = m->kjob;
	const uint8_t *id = NULL;
	size_t size = 0;

	if (!k)
		return false;
	known_build_id(m, "[kernel.kallsyms]", &id, &size);
	if ((k->given ? !m->kallsyms_path || strcmp(k->given, m->kallsyms_path) :
			!!m->kallsyms_path) ||
	    (!k->given && (k->text != m->kernel_text || k->id_size != size ||
			   memcmp(k->id, id, size))))
		return false;
	cs_tasks_claim(m->tasks, &k->task);
	if (cs_task_state(m->tasks, &k->task) != CS_TASK_DONE)
		return false;
	*out = k->out;
	memset(&k->out, 0, sizeof(k->out));
	return true;
}

static void load_kernel(struct cs_machine *m)
{
	struct kernel_load kl = { 0 };
	const uint8_t *id = NULL;
	size_t size = 0;

	m->kernel_tried = true;
	if (!kernel_from_job(m, &kl)) {
		known_build_id(m, "[kernel.kallsyms]", &id, &size);
		kernel_load(m->dsos, m->kallsyms_path, id, size, m->kernel_text,
			    &kl);
	}
	/* taken in stream order, as if loaded here and now */
	if (kl.path && !m->kallsyms_path)
		m->kallsyms_path = kl.path;
	else
		free(kl.path);
	m->kernel = kl.table;
	if (kl.open_errno)
		snprintf(m->kallsyms_error, sizeof(m->kallsyms_error), "%s: %s",
			 m->kallsyms_path, strerror(kl.open_errno));
	else if (kl.error[0])
		memcpy(m->kallsyms_error, kl.error, sizeof(kl.error));
	if (kl.key) {
		cs_dso_table_save(m->dsos, m->kernel, kl.key);
		free(kl.key);
	}
}

/* What kernel address addr shows when no KSYMBOL holds it: tab is the
 * kernel's symbols (NULL: none), outside whether addr is outside the
 * kernel's map. */
static void resolve_in_kernel(struct cs_symtab *tab, bool outside,
			      uint64_t addr, struct cs_location *loc,
			      struct cs_loc_lens *lens)
{
	static const char kernel_name[] = "[kernel.kallsyms]";
	struct cs_sym s;

	loc->kernel = true;
	loc->dso_name = kernel_name;
	lens->dso = sizeof(kernel_name) - 1;
	loc->dso_addr = addr;
	if (!tab || !cs_symtab_lookup(tab, addr, &s)) {
		/* outside the kernel's map, an address without a symbol has
		 * no dso at all, as perf shows it */
		if (outside) {
			loc->dso_name = NULL;
			lens->dso = 0;
		}
		return;
	}
	loc->sym = s.name;
	lens->sym = s.name_len;
	loc->sym_start = s.start;
	loc->sym_offset = addr - s.start;
	if (s.module) {
		loc->dso_name = s.module;
		lens->dso = strlen(s.module);
	}
}

/* The KSYMBOL (a BPF program, a trampoline) that holds addr, or NULL. */
static const struct ksym *ksym_at(const struct cs_machine *m, uint64_t addr)
{
	/* the one that starts at addr or nearest below it */
	size_t i = ksym_lower_bound(m, addr);

	if (i == m->nr_ksyms || m->ksyms[i].addr != addr)
		i--;			/* none below: SIZE_MAX */
	if (i < m->nr_ksyms && addr - m->ksyms[i].addr < m->ksyms[i].len)
		return &m->ksyms[i];
	return NULL;
}

static bool outside_kernel(const struct cs_machine *m, uint64_t addr)
{
	return m->kernel_end && (addr < m->kernel_start || addr >= m->kernel_end);
}

static void resolve_kernel(struct cs_machine *m, uint64_t addr,
			   struct cs_location *loc, struct cs_loc_lens *lens)
{
	const struct ksym *k = ksym_at(m, addr);

	if (k) {
		loc->kernel = true;
		loc->dso_addr = addr;
		loc->sym = k->name;
		lens->sym = lens->dso = strlen(k->name);
		loc->sym_start = k->addr;
		loc->sym_offset = addr - k->addr;
		loc->dso_name = k->name;
		loc->map_start = k->addr;
		loc->map_end = k->addr + k->len;
		return;
	}
	if (!m->kernel_tried)
		load_kernel(m);
	resolve_in_kernel(m->kernel, outside_kernel(m, addr), addr, loc, lens);
}

/* What user address addr's place (binary d, file offset off) shows: its
 * dso, build id, address in the binary and symbol. d is loaded. */
static void resolve_in_dso(struct cs_dso *d, uint64_t off,
			   struct cs_location *loc, struct cs_loc_lens *lens)
{
	struct cs_sym s;

	loc->dso_name = d->name;
	lens->dso = d->name_len;
	if (d->build_id_size) {
		loc->build_id = d->build_id;
		loc->build_id_size = d->build_id_size;
	} else if (d->status == CS_DSO_LOADED && d->info.build_id_size) {
		loc->build_id = d->info.build_id;
		loc->build_id_size = d->info.build_id_size;
	}
	loc->dso_addr = d->status == CS_DSO_LOADED ?
			cs_elf_offset_to_vaddr(&d->info, off) : off;
	if (d->status != CS_DSO_LOADED || !cs_dso_find_sym(d, loc->dso_addr, &s))
		return;
	loc->sym = s.name;
	lens->sym = s.name_len;
	loc->sym_start = s.start;
	loc->sym_offset = loc->dso_addr - s.start;
}

static void resolve_user(struct cs_machine *m, struct proc *p, uint64_t addr,
			 struct cs_location *loc, struct cs_loc_lens *lens)
{
	const struct cs_map *map = p ? cs_maps_find(&p->maps, addr) : NULL;
	struct cs_dso *d;

	if (!map)			/* kernel-looking garbage included: */
		return;			/* perf shows it unknown too */
	d = map->dso;
	cs_dso_load(m->dsos, d);
	loc->map_start = map->start;
	loc->map_end = map->end;
	loc->map_pgoff = map->pgoff;
	resolve_in_dso(d, addr - map->start + map->pgoff, loc, lens);
}

static struct cache_ent *cache_slot(struct cs_machine *m, uint64_t space,
				     uint64_t addr)
{
	return &m->cache[(cs_hash_u32((uint32_t)(addr >> 2) ^ (uint32_t)(addr >> 34)) ^
			  (uint32_t)space * 0x9e3779b1U) & ((1u << CACHE_BITS) - 1)];
}

void cs_machine_prefetch(struct cs_machine *m, uint32_t pid, uint8_t cpumode,
			 uint64_t addr)
{
	__builtin_prefetch(cache_slot(m, cs_machine_is_kernel(cpumode, addr) ?
				      m->kernel_space :
				      cs_machine_user_space(m, pid), addr));
}

void cs_machine_resolve(struct cs_machine *m, uint32_t pid, uint8_t cpumode,
			uint64_t addr, struct cs_location *loc)
{
	bool kernel = cs_machine_is_kernel(cpumode, addr);
	struct proc *p = NULL;
	struct cache_ent *c;
	struct cs_loc_lens lens;
	uint64_t space;

	if (kernel) {
		space = m->kernel_space;
	} else {
		p = proc_get(m, pid);
		/* a process we never saw has space 0 (nothing maps) */
		space = p ? p->maps.space : 0;
	}
	c = cache_slot(m, space, addr);
	if (c->space == space && c->addr == addr) {
		*loc = c->loc;
		return;
	}
	memset(loc, 0, sizeof(loc[0]));
	if (kernel)
		resolve_kernel(m, addr, loc, &lens);
	else
		resolve_user(m, p, addr, loc, &lens);
	c->space = space;
	c->addr = addr;
	c->loc = *loc;
}

void cs_machine_resolve_once(struct cs_machine *m, uint32_t pid,
			     uint8_t cpumode, uint64_t addr,
			     struct cs_location *loc, struct cs_loc_lens *lens)
{
	struct cs_loc_lens unwanted;

	if (!lens)
		lens = &unwanted;
	memset(loc, 0, sizeof(loc[0]));
	*lens = (struct cs_loc_lens){ 0 };
	if (cs_machine_is_kernel(cpumode, addr))
		resolve_kernel(m, addr, loc, lens);
	else
		resolve_user(m, proc_get(m, pid), addr, loc, lens);
}

bool cs_machine_user_place(struct cs_machine *m, uint32_t pid, uint64_t addr,
			   const void **bin, uint64_t *off)
{
	struct proc *p = proc_get(m, pid);
	const struct cs_map *map = p ? cs_maps_find(&p->maps, addr) : NULL;

	if (!map)
		return false;
	*bin = map->dso;
	*off = addr - map->start + map->pgoff;
	return true;
}

void cs_machine_place_load(struct cs_machine *m, const void *bin)
{
	cs_dso_load(m->dsos, (struct cs_dso *)bin);
}

void cs_machine_place_load_inlines(struct cs_machine *m, const void *bin)
{
	struct cs_dso *d = (struct cs_dso *)bin;

	cs_dso_load(m->dsos, d);
	if (d->status == CS_DSO_LOADED)
		cs_dso_inlines_open(m->dsos, d);
}

bool cs_machine_place_loads(const void *bin, bool inlines)
{
	const struct cs_dso *d = bin;

	/* located (by the unwinder) is not loaded: its symbols are not read */
	if (d->status == CS_DSO_NOT_LOADED || d->status == CS_DSO_FOUND)
		return true;
	return inlines && d->status == CS_DSO_LOADED && !d->inlines_tried;
}

bool cs_machine_place_inlined(const void *bin)
{
	const struct cs_dso *d = bin;

	return d->status == CS_DSO_LOADED && d->inlines;
}

size_t cs_machine_place_inlines(const void *bin, uint64_t off,
				const char **names, size_t cap)
{
	const struct cs_dso *d = bin;

	if (d->status != CS_DSO_LOADED)
		return 0;
	return cs_dso_inlines_at(d, cs_elf_offset_to_vaddr(&d->info, off),
				 names, cap);
}

bool cs_machine_kernel_place(struct cs_machine *m, uint64_t addr,
			     const void **tab, bool *outside)
{
	if (ksym_at(m, addr))
		return false;
	if (!m->kernel_tried)
		load_kernel(m);
	*tab = m->kernel;
	*outside = outside_kernel(m, addr);
	return true;
}

bool cs_machine_kernel_loads(const struct cs_machine *m)
{
	return !m->kernel_tried;
}

void cs_machine_kernel_place_resolve(const void *tab, bool outside,
				     uint64_t addr, struct cs_location *loc,
				     struct cs_loc_lens *lens)
{
	struct cs_loc_lens unwanted;

	if (!lens)
		lens = &unwanted;
	memset(loc, 0, sizeof(loc[0]));
	*lens = (struct cs_loc_lens){ 0 };
	resolve_in_kernel((struct cs_symtab *)tab, outside, addr, loc, lens);
}

void cs_machine_place_resolve(const void *bin, uint64_t off,
			      struct cs_location *loc, struct cs_loc_lens *lens)
{
	struct cs_loc_lens unwanted;

	if (!lens)
		lens = &unwanted;
	memset(loc, 0, sizeof(loc[0]));
	*lens = (struct cs_loc_lens){ 0 };
	resolve_in_dso((struct cs_dso *)bin, off, loc, lens);
}

uint64_t cs_machine_user_space(struct cs_machine *m, uint32_t pid)
{
	const struct proc *p = proc_get(m, pid);

	return p ? p->maps.space : 0;
}

uint64_t cs_machine_kernel_space(const struct cs_machine *m)
{
	return m->kernel_space;
}

static const char *unwind_debug_file(const void *key, void *ctx)
{
	return cs_dso_debug_file(ctx, (struct cs_dso *)key);
}

/* The load bias of addr in map, and the addresses around it that share
 * it: the map's part of the segment that holds addr. */
static void unwind_module_bias(const struct cs_map *map,
			       const struct cs_elf_info *info, uint64_t addr,
			       struct cs_unwind_module *mod)
{
	uint64_t off = addr - map->start + map->pgoff;

	mod->bias = addr - cs_elf_offset_to_vaddr(info, off);
	for (size_t i = 0; i < info->nr_segs; i++) {
		const struct cs_elf_seg *s = &info->segs[i];
		uint64_t lo, hi;

		if (off < s->offset || off - s->offset >= s->filesz)
			continue;
		/* the segment's file range, as addresses of this map */
		lo = addr - (off - s->offset);
		hi = lo + s->filesz;
		mod->start = lo > map->start ? lo : map->start;
		mod->end = hi < map->end && hi > lo ? hi : map->end;
		return;
	}
}

bool cs_machine_unwind_module(struct cs_machine *m, uint32_t pid,
			      uint64_t addr, struct cs_unwind_module *mod)
{
	struct proc *p = cs_u32map_get(&m->procs, pid);
	const struct cs_map *map = p ? cs_maps_find(&p->maps, addr) : NULL;
	struct cs_dso *d;

	if (!map)
		return false;
	d = map->dso;
	cs_dso_locate(m->dsos, d);
	/* [heap], //anon, and JIT code named by a /tmp/perf-PID.map */
	if (d->status == CS_DSO_NOT_A_FILE ||
	    (d->status == CS_DSO_LOADED && !d->found))
		return false;
	*mod = (struct cs_unwind_module){
		.key = d,
		.name = d->name,
		.path = d->found,
		.debug_path = unwind_debug_file,
		.debug_ctx = m->dsos,
	};
	if (d->found)
		unwind_module_bias(map, &d->info, addr, mod);
	return true;
}

size_t cs_machine_inlines(struct cs_machine *m, uint32_t pid, uint64_t addr,
			  const char **names, size_t cap)
{
	struct proc *p = cs_u32map_get(&m->procs, pid);
	const struct cs_map *map = p ? cs_maps_find(&p->maps, addr) : NULL;
	struct cs_dso *d;
	uint64_t off;

	if (!map)
		return 0;
	d = map->dso;
	cs_dso_load(m->dsos, d);
	if (d->status != CS_DSO_LOADED)
		return 0;
	off = addr - map->start + map->pgoff;
	return cs_dso_inlines(m->dsos, d, cs_elf_offset_to_vaddr(&d->info, off),
			      names, cap);
}

size_t cs_machine_build_id_mismatches(const struct cs_machine *m,
				      const char **first)
{
	const struct cs_dso *d = NULL;
	size_t n = cs_dso_table_mismatches(m->dsos, &d);

	if (first)
		*first = d ? d->name : NULL;
	return n;
}

size_t cs_machine_files_missing(const struct cs_machine *m, const char **first)
{
	const struct cs_dso *d;
	size_t n = cs_dso_table_missing(m->dsos, &d);

	*first = d ? d->name : NULL;
	return n;
}

int cs_machine_for_each_file(struct cs_machine *m, cs_dso_file_fn fn, void *ctx)
{
	const uint8_t *id = NULL;
	size_t size = 0;
	int err = cs_dso_table_for_each_file(m->dsos, fn, ctx);

	if (err || !m->kernel || !m->kallsyms_path)
		return err;
	known_build_id(m, "[kernel.kallsyms]", &id, &size);
	return fn(ctx, CS_FILE_KALLSYMS, "[kernel.kallsyms]", id, size,
		  m->kallsyms_path);
}

const char *cs_machine_kallsyms_error(const struct cs_machine *m)
{
	return m->kallsyms_error[0] ? m->kallsyms_error : NULL;
}

/* ---- loading ahead ------------------------------------------------------ */

int cs_machine_preload(struct cs_machine *m)
{
	bool any = false;
	int err;

	if (!m->preload_workers || m->tasks)
		return 0;
	for (size_t i = 0; i < m->nr_ids && !any; i++)
		any = m->ids[i].kernel ? m->ids[i].path[0] == '[' :
		      m->ids[i].path[0] == '/';
	if (!any)
		return 0;
	err = cs_tasks_new(m->preload_workers, &m->tasks);
	if (err)
		return err == -ENOMEM ? err : 0;	/* no threads: no hurry */
	cs_dso_table_use_tasks(m->dsos, m->tasks);
	for (size_t i = 0; i < m->nr_ids; i++) {
		const struct known_id *k = &m->ids[i];
		const uint8_t *id = NULL;
		size_t size = 0;
		struct cs_dso *d;

		if (k->kernel) {
			/* [kernel.kallsyms] or [guest.kernel.kallsyms]; modules
			 * are in the kernel's list */
			if (!strcmp(k->path, "[kernel.kallsyms]"))
				m->kernel_wanted = true;
			continue;
		}
		/* the dso a map of this path without a build id of its own
		 * will be (on_mmap()): the first id listed for the path */
		known_build_id(m, k->path, &id, &size);
		if (id != k->id || k->path[0] != '/')
			continue;
		d = cs_dso_findnew(m->dsos, k->path, strlen(k->path), id, size);
		if (!d)
			return -ENOMEM;
		cs_dso_preload(m->dsos, d, m->preload_inlines);
	}
	/* --kallsyms needs no map to be checked against */
	if (m->kernel_wanted && m->kallsyms_path)
		kernel_ahead(m);
	return 0;
}
