/* dsos.c - per-process maps of executable files, hit marking, build ids. */
#include "record/dsos.h"
#include "lib/util/hash.h"
#include "lib/util/u32map.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "abi/perf_abi.h"
#include "abi/perf_regs.h"
#include "record/peek.h"

#define NT_GNU_BUILD_ID_TYPE 3

struct dso {
	char *path;
	bool hit;
	bool foreign;			/* seen in another mount namespace */
	int fd;				/* foreign: the file, held open; or -1 */
	uint8_t bid_size;		/* 0: read from the file at the end */
	uint8_t bid[CS_BUILD_ID_SIZE_MAX];
};

struct map {
	uint64_t start, end;
	uint32_t dso;
};

enum mount_ns { NS_UNKNOWN, NS_OURS, NS_OTHER };

struct proc {
	uint32_t pid;
	uint8_t ns;			/* enum mount_ns, asked on first map */
	uint32_t parent;		/* maps are inherited from it; 0: none */
	struct map *maps;		/* sorted by start */
	size_t nr, cap;
};

struct cs_dsos {
	uint64_t sample_type;
	uint64_t regs_mask;		/* dwarf samples: scan their stack copy */
	struct dso *dsos;
	size_t nr_dsos, cap_dsos;
	uint32_t *dso_tab;		/* open addressing: dso index + 1 */
	size_t dso_tab_cap;
	struct cs_u32map procs;		/* pid -> struct proc, ours */
	bool kernel_hit;
	struct stat own_ns, own_root;	/* ours, to tell other processes' */
	bool own_known;
	size_t nr_fds;			/* foreign binaries held open */
};

/* Binaries held open at once: beyond this a container's binaries are
 * only named, not kept (the recorder raised its limit well above). */
#define MAX_HELD_FDS 1024

int cs_dsos_new(uint64_t sample_type, struct cs_dsos **out)
{
	struct cs_dsos *d = calloc(1, sizeof(*d));

	*out = NULL;
	if (!d)
		return -ENOMEM;
	d->sample_type = sample_type;
	d->own_known = !stat("/proc/self/ns/mnt", &d->own_ns) &&
		       !stat("/", &d->own_root);
	d->dso_tab_cap = 256;
	d->dso_tab = calloc(d->dso_tab_cap, sizeof(*d->dso_tab));
	if (!d->dso_tab) {
		cs_dsos_free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

static int grow_dso_tab(struct cs_dsos *d)
{
	size_t cap = d->dso_tab_cap * 2;
	uint32_t *tab = calloc(cap, sizeof(*tab));

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_dsos; i++) {
		size_t j = cs_hash_str(d->dsos[i].path) & (cap - 1);

		while (tab[j])
			j = (j + 1) & (cap - 1);
		tab[j] = (uint32_t)i + 1;
	}
	free(d->dso_tab);
	d->dso_tab = tab;
	d->dso_tab_cap = cap;
	return 0;
}

static bool same_dso(const struct dso *o, const char *path, bool foreign,
		     const uint8_t *bid, size_t bid_size)
{
	/* one path may name other files in other namespaces: there the
	 * build id tells them apart */
	return !strcmp(o->path, path) && o->foreign == foreign &&
	       (!foreign || (o->bid_size == bid_size &&
			     !memcmp(o->bid, bid, bid_size)));
}

/* The slot of the dso (path, and for a foreign one its build id) in the
 * hash table: its index + 1 there, or 0 where it would go. */
static size_t dso_slot(const struct cs_dsos *d, const char *path, bool foreign,
		       const uint8_t *bid, size_t bid_size)
{
	size_t j = cs_hash_str(path) & (d->dso_tab_cap - 1);

	for (; d->dso_tab[j]; j = (j + 1) & (d->dso_tab_cap - 1))
		if (same_dso(&d->dsos[d->dso_tab[j] - 1], path, foreign, bid,
			     bid_size))
			break;
	return j;
}

/* The index of the dso, added if new; negative errno on failure. */
static long dso_index(struct cs_dsos *d, const char *path, bool foreign,
		      const uint8_t *bid, size_t bid_size)
{
	size_t j = dso_slot(d, path, foreign, bid, bid_size);
	struct dso *nd;

	if (d->dso_tab[j])
		return (long)d->dso_tab[j] - 1;
	if ((d->nr_dsos + 1) * 2 > d->dso_tab_cap) {
		if (grow_dso_tab(d))
			return -ENOMEM;
		for (j = cs_hash_str(path) & (d->dso_tab_cap - 1); d->dso_tab[j];
		     j = (j + 1) & (d->dso_tab_cap - 1))
			;
	}
	if (d->nr_dsos == d->cap_dsos) {
		size_t cap = d->cap_dsos ? d->cap_dsos * 2 : 64;

		nd = realloc(d->dsos, cap * sizeof(*nd));
		if (!nd)
			return -ENOMEM;
		d->dsos = nd;
		d->cap_dsos = cap;
	}
	nd = &d->dsos[d->nr_dsos];
	memset(nd, 0, sizeof(*nd));
	nd->fd = -1;
	nd->foreign = foreign;
	nd->path = strdup(path);
	if (!nd->path)
		return -ENOMEM;
	d->dso_tab[j] = (uint32_t)++d->nr_dsos;
	return (long)d->nr_dsos - 1;
}

/* The process entry of pid (created when `create`), or NULL. */
static struct proc *proc_of(struct cs_dsos *d, uint32_t pid, bool create)
{
	struct proc *p;
	bool created;

	if (!create)
		return cs_u32map_get(&d->procs, pid);
	p = cs_u32map_get_new(&d->procs, pid, sizeof(*p), &created);
	if (p && created)
		p->pid = pid;
	return p;
}

/* Index of the last map starting at or below addr, or -1. */
static long map_floor(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* Whether pid sees another file system than we do: another mount
 * namespace (a container) or another root (chroot). Asked once per
 * process image, while the process lives. */
static bool in_other_ns(struct cs_dsos *d, struct proc *p)
{
	char path[64];
	struct stat ns, root;

	if (p->ns == NS_UNKNOWN) {
		p->ns = NS_OURS;
		snprintf(path, sizeof(path), "/proc/%u/ns/mnt", p->pid);
		if (d->own_known && !stat(path, &ns)) {
			snprintf(path, sizeof(path), "/proc/%u/root/", p->pid);
			if (ns.st_ino != d->own_ns.st_ino ||
			    ns.st_dev != d->own_ns.st_dev ||
			    (!stat(path, &root) &&
			     (root.st_ino != d->own_root.st_ino ||
			      root.st_dev != d->own_root.st_dev)))
				p->ns = NS_OTHER;
		}
	}
	return p->ns == NS_OTHER;
}

/* A binary of a process in another namespace, opened through its root
 * while the process lives: the path may mean nothing here, and by the end
 * of the recording the namespace may be gone. Returns the fd, or -1. */
static int open_foreign(struct cs_dsos *d, uint32_t pid, const char *path,
			uint8_t *bid, size_t *bid_size)
{
	char at[4096];
	int fd, n;

	if (d->nr_fds >= MAX_HELD_FDS ||
	    snprintf(at, sizeof(at), "/proc/%u/root%s", pid, path) >= (int)sizeof(at))
		return -1;
	fd = open(at, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (!*bid_size) {
		snprintf(at, sizeof(at), "/proc/self/fd/%d", fd);
		n = cs_dsos_read_build_id(at, bid, CS_BUILD_ID_SIZE_MAX);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		*bid_size = (size_t)n;
	}
	return fd;
}

static int add_map(struct cs_dsos *d, uint32_t pid, uint64_t start, uint64_t len,
		   const char *path, const uint8_t *rec_bid, size_t bid_size)
{
	uint8_t bid[CS_BUILD_ID_SIZE_MAX];
	struct proc *p = proc_of(d, pid, true);
	bool foreign = false;
	int fd = -1;
	long di, at;
	struct map *m;

	if (!p)
		return -ENOMEM;
	if (bid_size > CS_BUILD_ID_SIZE_MAX)
		bid_size = 0;
	if (bid_size)
		memcpy(bid, rec_bid, bid_size);
	if (path[0] == '/' && in_other_ns(d, p)) {
		size_t j;

		foreign = true;
		/* with the build id in the record, each build is opened once
		 * however many processes map it */
		j = bid_size ? dso_slot(d, path, true, bid, bid_size) : 0;
		if (!bid_size || !d->dso_tab[j] || d->dsos[d->dso_tab[j] - 1].fd < 0)
			fd = open_foreign(d, pid, path, bid, &bid_size);
	}
	di = dso_index(d, path, foreign, bid, bid_size);
	if (di < 0) {
		if (fd >= 0)
			close(fd);
		return (int)di;
	}
	if (fd >= 0 && d->dsos[di].fd < 0) {
		d->dsos[di].fd = fd;	/* the table owns it now */
		d->nr_fds++;
	} else if (fd >= 0) {
		close(fd);
	}
	if (bid_size && !d->dsos[di].bid_size) {
		memcpy(d->dsos[di].bid, bid, bid_size);
		d->dsos[di].bid_size = (uint8_t)bid_size;
	}
	at = map_floor(p, start);
	if (at >= 0 && p->maps[at].start == start) {
		m = &p->maps[at];	/* remapped at the same place */
	} else {
		if (p->nr == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 16;
			struct map *nm = realloc(p->maps, cap * sizeof(*nm));

			if (!nm)
				return -ENOMEM;
			p->maps = nm;
			p->cap = cap;
		}
		at++;
		memmove(&p->maps[at + 1], &p->maps[at], (p->nr - (size_t)at) * sizeof(*m));
		p->nr++;
		m = &p->maps[at];
	}
	m->start = start;
	m->end = start + len;
	m->dso = (uint32_t)di;
	return 0;
}

static int see_mmap(struct cs_dsos *d, const unsigned char *r, size_t size, uint32_t type,
		    uint16_t misc)
{
	uint32_t pid, prot;
	uint64_t start, len;
	size_t name_off = type == CS_RECORD_MMAP2 ? 72 : 40;
	const uint8_t *bid = NULL;
	size_t bid_size = 0;

	if ((misc & CS_MISC_CPUMODE_MASK) != CS_MISC_USER || size <= name_off)
		return 0;
	if (!memchr(r + name_off, '\0', size - name_off))
		return 0;
	memcpy(&pid, r + 8, 4);
	memcpy(&start, r + 16, 8);
	memcpy(&len, r + 24, 8);
	if (type == CS_RECORD_MMAP2) {
		memcpy(&prot, r + 64, 4);
		if (!(prot & PROT_EXEC))
			return 0;
		if (misc & CS_MISC_MMAP_BUILD_ID) {
			bid_size = r[40];
			bid = r + 44;
		}
	} else if (misc & CS_MISC_MMAP_DATA) {
		return 0;
	}
	return add_map(d, pid, start, len, (const char *)r + name_off, bid, bid_size);
}

static void mark(struct cs_dsos *d, uint32_t pid, uint64_t ip)
{
	struct proc *p = proc_of(d, pid, false);

	/* a forked child without an exec runs its parent's code */
	for (int depth = 0; p && depth < 8; depth++) {
		long at = map_floor(p, ip);

		if (at >= 0 && ip < p->maps[at].end) {
			d->dsos[p->maps[at].dso].hit = true;
			return;
		}
		p = p->parent ? proc_of(d, p->parent, false) : NULL;
	}
}

void cs_dsos_scan_user_stacks(struct cs_dsos *d, uint64_t regs_mask)
{
	d->regs_mask = regs_mask;
}

/* The words of a stack copy that lie in an executable map of pid. The
 * unwinder will find return addresses among them, so this marks a
 * superset of the binaries its frames name: one range check per word,
 * a binary search for the few that pass. */
static void mark_words(struct cs_dsos *d, uint32_t pid, const unsigned char *words,
		       uint64_t nr)
{
	struct proc *p = proc_of(d, pid, false);
	uint64_t lo, hi;

	/* a forked child without an exec runs its parent's code */
	for (int depth = 0; p && !p->nr && p->parent && depth < 8; depth++)
		p = proc_of(d, p->parent, false);
	if (!p || !p->nr)
		return;
	lo = p->maps[0].start;
	hi = p->maps[p->nr - 1].end;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t w;
		long at;

		memcpy(&w, words + i * 8, 8);
		if (w < lo || w >= hi)
			continue;
		at = map_floor(p, w);
		if (at >= 0 && w < p->maps[at].end)
			d->dsos[p->maps[at].dso].hit = true;
	}
}

static void mark_user_copy(struct cs_dsos *d, const void *rec, size_t size,
			   const struct cs_rec_sample *s)
{
	int ip = cs_perf_reg_slot(d->regs_mask, CS_PERF_REG_USER_IP);
	struct cs_rec_user_copy u;

	if (cs_rec_peek_user_copy(d->sample_type, d->regs_mask, rec, size, s, &u))
		return;
	if (u.regs && ip >= 0)
		mark(d, s->pid, u.regs[ip]);
	mark_words(d, s->pid, u.stack, u.stack_size / 8);
}

static void mark_sample(struct cs_dsos *d, const void *rec, size_t size)
{
	struct cs_rec_sample s;
	uint8_t mode;

	if (cs_rec_peek_sample(d->sample_type, rec, size, &s))
		return;
	mode = s.misc & CS_MISC_CPUMODE_MASK;
	if (mode == CS_MISC_KERNEL)
		d->kernel_hit = true;
	else if (mode == CS_MISC_USER)
		mark(d, s.pid, s.ip);
	mode = 0;
	for (uint64_t i = 0; i < s.chain_nr; i++) {
		uint64_t ip = s.chain[i];

		if (cs_is_context_marker(ip)) {
			if (ip == CS_CONTEXT_KERNEL) {
				mode = CS_MISC_KERNEL;
			} else if (ip == CS_CONTEXT_USER) {
				mode = CS_MISC_USER;
			} else if (ip == CS_CONTEXT_USER_DEFERRED) {
				i++;	/* the cookie: no address */
				mode = CS_MISC_USER;
			} else {
				mode = 0;
			}
			continue;
		}
		if (mode == CS_MISC_KERNEL)
			d->kernel_hit = true;
		else if (mode == CS_MISC_USER)
			mark(d, s.pid, ip);
	}
	if (d->regs_mask)
		mark_user_copy(d, rec, size, &s);
}

int cs_dsos_see(struct cs_dsos *d, const void *rec, size_t size)
{
	const unsigned char *r = rec;
	struct cs_perf_event_header h;
	uint32_t pid, ppid;
	struct proc *p;

	if (size < sizeof(h))
		return 0;
	memcpy(&h, rec, sizeof(h));
	switch (h.type) {
	case CS_RECORD_SAMPLE:
		mark_sample(d, rec, size);
		return 0;
	case CS_RECORD_MMAP:
	case CS_RECORD_MMAP2:
		return see_mmap(d, r, size, h.type, h.misc);
	case CS_RECORD_FORK:
		if (size < 16)
			return 0;
		memcpy(&pid, r + 8, 4);
		memcpy(&ppid, r + 12, 4);
		if (pid == ppid)
			return 0;	/* a new thread shares its process's maps */
		p = proc_of(d, pid, true);
		if (!p)
			return -ENOMEM;
		if (!p->nr)
			p->parent = ppid;
		return 0;
	case CS_RECORD_COMM:
		if (!(h.misc & CS_MISC_COMM_EXEC) || size < 16)
			return 0;
		memcpy(&pid, r + 8, 4);
		p = proc_of(d, pid, false);
		if (p) {
			p->nr = 0;	/* exec replaced the whole image */
			p->parent = 0;
			p->ns = NS_UNKNOWN;	/* unshare(1) execs into a new one */
		}
		return 0;
	}
	return 0;
}

/* Walks ELF notes in data for the GNU build id. */
static int note_build_id(Elf_Data *data, uint8_t *out, size_t cap)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
		    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0) {
			size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;

			memcpy(out, (const char *)data->d_buf + desc_off, n);
			return (int)n;
		}
	}
	return -ENOENT;
}

int cs_dsos_read_build_id(const char *path, uint8_t *out, size_t cap)
{
	int fd, ret = -ENOENT;
	Elf *e;
	size_t nph = 0;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		ret = -EINVAL;
		goto out;
	}
	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph && ret < 0; i++) {
			GElf_Phdr ph;
			Elf_Data *data;

			if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
				continue;
			data = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
						    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (data)
				ret = note_build_id(data, out, cap);
		}
	}
	if (ret < 0) {
		Elf_Scn *scn = NULL;

		while (ret < 0 && (scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
				continue;
			data = elf_getdata(scn, NULL);
			if (data)
				ret = note_build_id(data, out, cap);
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return ret;
}

/* The kernel's build id from its notes (a bare sequence of ELF notes). */
static int kernel_build_id(uint8_t *out, size_t cap)
{
	unsigned char buf[4096];
	FILE *f = fopen("/sys/kernel/notes", "r");
	size_t n, off = 0;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (n - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_at = off + 12, desc_at, next;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		if (namesz > n || descsz > n)
			break;
		desc_at = name_at + ((namesz + 3) & ~3u);
		next = desc_at + ((descsz + 3) & ~3u);
		if (next > n)
			break;
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(buf + name_at, "GNU", 4) && descsz) {
			size_t len = descsz < cap ? descsz : cap;

			memcpy(out, buf + desc_at, len);
			return (int)len;
		}
		off = next;
	}
	return -ENOENT;
}

int cs_dsos_for_each_hit(struct cs_dsos *d, cs_dsos_fn fn, void *ctx)
{
	uint8_t bid[CS_BUILD_ID_SIZE_MAX];
	int n, err;

	if (d->kernel_hit) {
		n = kernel_build_id(bid, sizeof(bid));
		if (n > 0) {
			err = fn(ctx, CS_MISC_KERNEL, bid, (size_t)n, "[kernel.kallsyms]",
				 NULL);
			if (err)
				return err;
		}
	}
	for (size_t i = 0; i < d->nr_dsos; i++) {
		struct dso *o = &d->dsos[i];

		char held[64];
		const char *src = NULL;

		if (!o->hit || o->path[0] != '/')
			continue;	/* [vdso], //anon, ...: no file to name */
		if (o->foreign && !o->bid_size)
			continue;	/* gone before it was read: our file at
					 * that path is another one */
		if (o->fd >= 0) {
			snprintf(held, sizeof(held), "/proc/self/fd/%d", o->fd);
			src = held;
		}
		if (o->bid_size) {
			err = fn(ctx, CS_MISC_USER, o->bid, o->bid_size, o->path, src);
		} else {
			n = cs_dsos_read_build_id(o->path, bid, sizeof(bid));
			if (n <= 0)
				continue;
			err = fn(ctx, CS_MISC_USER, bid, (size_t)n, o->path, src);
		}
		if (err)
			return err;
	}
	return 0;
}

static void proc_free(void *val)
{
	struct proc *p = val;

	free(p->maps);
	free(p);
}

void cs_dsos_free(struct cs_dsos *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_dsos; i++) {
		if (d->dsos[i].fd >= 0)
			close(d->dsos[i].fd);
		free(d->dsos[i].path);
	}
	cs_u32map_free(&d->procs, proc_free);
	free(d->dsos);
	free(d->dso_tab);
	free(d);
}
