/* event_parse.c - perf's event syntax -> type, config and modifiers. */
#include "record/event_parse.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "abi/perf_abi.h"
#include "lib/util/errbuf.h"
#include "record/tracefs.h"

#define PMUS_DIR "/sys/bus/event_source/devices"
#define MAX_ALIAS_DEPTH 2	/* a named event's terms name no further events */

/* ---- symbolic names ------------------------------------------------------ */

static const struct symbolic {
	const char *name;
	uint32_t type;
	uint64_t config;
} symbolic[] = {
	{ "cpu-cycles",              CS_PERF_TYPE_HARDWARE, 0 },
	{ "cycles",                  CS_PERF_TYPE_HARDWARE, 0 },
	{ "instructions",            CS_PERF_TYPE_HARDWARE, 1 },
	{ "cache-references",        CS_PERF_TYPE_HARDWARE, 2 },
	{ "cache-misses",            CS_PERF_TYPE_HARDWARE, 3 },
	{ "branch-instructions",     CS_PERF_TYPE_HARDWARE, 4 },
	{ "branches",                CS_PERF_TYPE_HARDWARE, 4 },
	{ "branch-misses",           CS_PERF_TYPE_HARDWARE, 5 },
	{ "bus-cycles",              CS_PERF_TYPE_HARDWARE, 6 },
	{ "stalled-cycles-frontend", CS_PERF_TYPE_HARDWARE, 7 },
	{ "idle-cycles-frontend",    CS_PERF_TYPE_HARDWARE, 7 },
	{ "stalled-cycles-backend",  CS_PERF_TYPE_HARDWARE, 8 },
	{ "idle-cycles-backend",     CS_PERF_TYPE_HARDWARE, 8 },
	{ "ref-cycles",              CS_PERF_TYPE_HARDWARE, 9 },
	{ "cpu-clock",               CS_PERF_TYPE_SOFTWARE, 0 },
	{ "task-clock",              CS_PERF_TYPE_SOFTWARE, 1 },
	{ "page-faults",             CS_PERF_TYPE_SOFTWARE, 2 },
	{ "faults",                  CS_PERF_TYPE_SOFTWARE, 2 },
	{ "context-switches",        CS_PERF_TYPE_SOFTWARE, 3 },
	{ "cs",                      CS_PERF_TYPE_SOFTWARE, 3 },
	{ "cpu-migrations",          CS_PERF_TYPE_SOFTWARE, 4 },
	{ "migrations",              CS_PERF_TYPE_SOFTWARE, 4 },
	{ "minor-faults",            CS_PERF_TYPE_SOFTWARE, 5 },
	{ "major-faults",            CS_PERF_TYPE_SOFTWARE, 6 },
	{ "alignment-faults",        CS_PERF_TYPE_SOFTWARE, 7 },
	{ "emulation-faults",        CS_PERF_TYPE_SOFTWARE, 8 },
	{ "dummy",                   CS_PERF_TYPE_SOFTWARE, 9 },
	{ "bpf-output",              CS_PERF_TYPE_SOFTWARE, 10 },
	{ "cgroup-switches",         CS_PERF_TYPE_SOFTWARE, 11 },
};

/* Hardware cache events: CACHE[-OP][-RESULT], config = cache | op << 8 |
 * result << 16; aliases as perf spells them. */
static const char *const cache_names[][5] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data" },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction" },
	{ "LLC", "L2" },
	{ "dTLB", "d-tlb", "Data-TLB" },
	{ "iTLB", "i-tlb", "Instruction-TLB" },
	{ "branch", "branches", "bpu", "btb", "bpc" },
	{ "node" },
};
static const char *const cache_ops[][5] = {
	{ "load", "loads", "read" },
	{ "store", "stores", "write" },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[][5] = {
	{ "refs", "Reference", "ops", "access" },
	{ "misses", "miss" },
};

/* Matches one alias of a table at s, followed by '-' or the end; returns
 * the row and advances *s past it (and the '-'), or -1. */
static int match_alias(const char **s, const char *const (*tab)[5], size_t rows)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t a = 0; a < 5 && tab[r][a]; a++) {
			size_t n = strlen(tab[r][a]);

			if (strncasecmp(*s, tab[r][a], n) || ((*s)[n] && (*s)[n] != '-'))
				continue;
			*s += n + ((*s)[n] == '-');
			return (int)r;
		}
	return -1;
}

static bool parse_cache(const char *s, uint64_t *config)
{
	int cache, op = 0, result = 0, v;

	cache = match_alias(&s, cache_names, sizeof(cache_names) / sizeof(cache_names[0]));
	if (cache < 0)
		return false;
	if (*s && (v = match_alias(&s, cache_ops, 3)) >= 0)
		op = v;
	if (*s && (v = match_alias(&s, cache_results, 2)) >= 0)
		result = v;
	if (*s)
		return false;
	*config = (uint64_t)cache | (uint64_t)op << 8 | (uint64_t)result << 16;
	return true;
}

/* ---- modifiers ----------------------------------------------------------- */

static int parse_mods(const char *mods, const char *event, uint64_t *flags,
		      struct cs_errbuf *eb)
{
	bool u = false, k = false, h = false;
	unsigned int precise = 0;

	*flags = 0;
	for (const char *p = mods; *p; p++) {
		switch (*p) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'h': h = true; break;
		case 'p': precise++; break;
		case 'G': *flags |= CS_ATTR_EXCLUDE_HOST; break;
		case 'H': *flags |= CS_ATTR_EXCLUDE_GUEST; break;
		default:
			return cs_error(eb, -EINVAL, "event '%s': unknown modifier '%c' "
					"(u, k, h, p, G, H)", event, *p);
		}
	}
	if (precise > 3)
		return cs_error(eb, -EINVAL, "event '%s': at most three p's (precise_ip "
				"0 to 3)", event);
	if (u || k || h) {
		if (!u)
			*flags |= CS_ATTR_EXCLUDE_USER;
		if (!k)
			*flags |= CS_ATTR_EXCLUDE_KERNEL;
		if (!h)
			*flags |= CS_ATTR_EXCLUDE_HV;
	}
	*flags |= (uint64_t)precise << CS_ATTR_PRECISE_SHIFT;
	return 0;
}

/* ---- the list being built ------------------------------------------------ */

static void event_clear(struct cs_rec_event *e)
{
	free(e->name);
	free(e->tp_system);
	free(e->tp_name);
}

void cs_rec_events_free(struct cs_rec_events *l)
{
	for (size_t i = 0; i < l->nr; i++)
		event_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->nr = 0;
}

/* Appends a copy of *e (taking its strings); frees them on failure. */
static int push(struct cs_rec_events *l, struct cs_rec_event *e)
{
	struct cs_rec_event *v = realloc(l->v, (l->nr + 1) * sizeof(*v));

	if (!v || !e->name) {
		if (v)
			l->v = v;
		event_clear(e);
		return -ENOMEM;
	}
	l->v = v;
	l->v[l->nr++] = *e;
	return 0;
}

/* ---- files --------------------------------------------------------------- */

/* The first line of a small file, without its newline. Returns 0 or a
 * negative errno. */
static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return 0;
}

static bool parse_number(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

/* ---- PMUs ---------------------------------------------------------------- */

struct pmu_event {
	const char *pmus;		/* the devices directory */
	const char *pmu;
	const char *event;		/* the whole item, for messages */
	struct cs_rec_event *e;
	char *name;			/* a name= term, malloc'd */
};

/* "config:0-7,32-35": puts value's bits into the config words, lowest
 * range first. */
static int apply_format(struct pmu_event *pe, const char *term, const char *spec,
			uint64_t value, struct cs_errbuf *eb)
{
	uint64_t *word;
	const char *p;

	if (!strncmp(spec, "config:", 7))
		word = &pe->e->config, p = spec + 7;
	else if (!strncmp(spec, "config1:", 8))
		word = &pe->e->config1, p = spec + 8;
	else if (!strncmp(spec, "config2:", 8))
		word = &pe->e->config2, p = spec + 8;
	else
		return cs_error(eb, -EINVAL, "event '%s': PMU %s's term '%s' has a "
				"format we do not know (%s)", pe->event, pe->pmu, term, spec);
	while (*p) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;
		unsigned int width;

		if (end == p)
			goto bad;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p)
				goto bad;
		}
		if (hi < lo || hi > 63)
			goto bad;
		width = (unsigned int)(hi - lo + 1);
		*word |= (width == 64 ? value : value & ((1ULL << width) - 1)) << lo;
		value = width == 64 ? 0 : value >> width;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (value)
		return cs_error(eb, -EINVAL, "event '%s': the value of '%s' is too "
				"large for its bits (%s)", pe->event, term, spec);
	return 0;
bad:
	return cs_error(eb, -EINVAL, "event '%s': PMU %s's format of '%s' reads "
			"'%s'", pe->event, pe->pmu, term, spec);
}

static int pmu_terms(struct pmu_event *pe, char *terms, int depth,
		     struct cs_errbuf *eb);

static int pmu_term(struct pmu_event *pe, char *term, int depth,
		    struct cs_errbuf *eb)
{
	char *eq = strchr(term, '=');
	const char *val = eq ? eq + 1 : NULL;
	char path[4096], line[1024];
	uint64_t v = 1;
	int err;

	if (eq)
		*eq = '\0';
	if (!*term || strchr(term, '/') || !strcmp(term, ".") || !strcmp(term, ".."))
		return cs_error(eb, -EINVAL, "event '%s': an empty or odd term", pe->event);
	if (!strcmp(term, "name")) {
		if (!val || !*val)
			return cs_error(eb, -EINVAL, "event '%s': name= wants a name",
					pe->event);
		free(pe->name);
		pe->name = strdup(val);
		return pe->name ? 0 : -ENOMEM;
	}
	if (val && !parse_number(val, &v))
		return cs_error(eb, -EINVAL, "event '%s': term '%s' wants a number, "
				"not '%s'", pe->event, term, val);
	if (!strcmp(term, "config") || !strcmp(term, "config1") ||
	    !strcmp(term, "config2")) {
		if (!val)
			return cs_error(eb, -EINVAL, "event '%s': %s= wants a value",
					pe->event, term);
		*(term[6] == '1' ? &pe->e->config1 : term[6] == '2' ?
		  &pe->e->config2 : &pe->e->config) = v;
		return 0;
	}
	if (!strcmp(term, "period") || !strcmp(term, "freq")) {
		if (!val || !v)
			return cs_error(eb, -EINVAL, "event '%s': %s= wants a positive "
					"number", pe->event, term);
		pe->e->period = v;
		pe->e->freq = term[0] == 'f';
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s/format/%s", pe->pmus, pe->pmu, term);
	if (!read_line(path, line, sizeof(line)))
		return apply_format(pe, term, line, v, eb);
	snprintf(path, sizeof(path), "%s/%s/events/%s", pe->pmus, pe->pmu, term);
	if (!val && depth < MAX_ALIAS_DEPTH && !strchr(term, '.') &&
	    !(err = read_line(path, line, sizeof(line))))
		return pmu_terms(pe, line, depth + 1, eb);
	return cs_error(eb, -EINVAL, "event '%s': PMU %s has no term or event '%s' "
			"(see %s/%s/format and events)", pe->event, pe->pmu, term,
			pe->pmus, pe->pmu);
}

static int pmu_terms(struct pmu_event *pe, char *terms, int depth,
		     struct cs_errbuf *eb)
{
	char *save = NULL;

	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int err;

		while (isspace((unsigned char)*t))
			t++;
		err = pmu_term(pe, t, depth, eb);
		if (err)
			return err;
	}
	return 0;
}

/* "pmu/terms/mods" */
static int parse_pmu(struct cs_rec_events *l, const char *item,
		     const struct cs_rec_event_roots *roots, struct cs_errbuf *eb)
{
	const char *slash = strchr(item, '/'), *close;
	struct cs_rec_event e = { 0 };
	struct pmu_event pe = { .event = item, .e = &e };
	char pmu[256], path[4096], line[64], *terms;
	uint64_t type;
	int err;

	close = strchr(slash + 1, '/');
	if (!close || slash == item || (size_t)(slash - item) >= sizeof(pmu))
		return cs_error(eb, -EINVAL, "event '%s': a PMU event reads "
				"PMU/TERMS/ (cpu/event=0x3c,umask=0/)", item);
	memcpy(pmu, item, (size_t)(slash - item));
	pmu[slash - item] = '\0';
	if (strchr(pmu, '.') == pmu)
		return cs_error(eb, -EINVAL, "event '%s': no such PMU", item);
	pe.pmus = roots && roots->pmus ? roots->pmus : PMUS_DIR;
	pe.pmu = pmu;
	snprintf(path, sizeof(path), "%s/%s/type", pe.pmus, pmu);
	err = read_line(path, line, sizeof(line));
	if (err || !parse_number(line, &type) || type > UINT32_MAX)
		return cs_error(eb, -ENOENT, "event '%s': no PMU named '%s' (see %s)",
				item, pmu, pe.pmus);
	e.type = (uint32_t)type;
	err = parse_mods(close[1] == ':' ? close + 2 : close + 1, item, &e.flags, eb);
	if (err)
		return err;
	terms = strndup(slash + 1, (size_t)(close - slash - 1));
	if (!terms)
		return -ENOMEM;
	err = pmu_terms(&pe, terms, 0, eb);
	free(terms);
	if (err) {
		free(pe.name);
		return err;
	}
	e.name = pe.name ? pe.name : strdup(item);
	return push(l, &e);
}

/* ---- tracepoints ---------------------------------------------------------- */

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static int add_tracepoint(struct cs_rec_events *l, const char *events_dir,
			  const char *sys, const char *name, const char *mods,
			  uint64_t flags, struct cs_errbuf *eb)
{
	struct cs_rec_event e = { .type = CS_PERF_TYPE_TRACEPOINT, .flags = flags };
	char path[4096], line[64];
	int err;

	snprintf(path, sizeof(path), "%s/%s/%s/id", events_dir, sys, name);
	err = read_line(path, line, sizeof(line));
	if (err == -EACCES || err == -EPERM)
		return cs_error(eb, -EACCES, "no permission to read %s: tracepoints "
				"need root (or access to tracefs)", path);
	if (err || !parse_number(line, &e.config))
		return cs_error(eb, -ENOENT, "unknown tracepoint '%s:%s' (no %s)",
				sys, name, path);
	e.tp_system = strdup(sys);
	e.tp_name = strdup(name);
	if (asprintf(&e.name, "%s:%s%s%s", sys, name, *mods ? ":" : "", mods) < 0)
		e.name = NULL;
	if (!e.tp_system || !e.tp_name) {
		free(e.name);
		e.name = NULL;
	}
	return push(l, &e);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The entries of dir that match pattern and are directories, sorted;
 * returns how many (*out malloc'd, each string too) or a negative errno. */
static long list_dirs(const char *dir, const char *pattern, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	long n = 0;

	*out = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char **nv;

		if (de->d_name[0] == '.' || fnmatch(pattern, de->d_name, 0))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv || !(nv[n] = strdup(de->d_name))) {
			v = nv ? nv : v;
			while (n--)
				free(v[n]);
			free(v);
			closedir(d);
			return -ENOMEM;
		}
		v = nv;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), name_cmp);
	*out = v;
	return n;
}

static void free_names(char **v, long n)
{
	while (n-- > 0)
		free(v[n]);
	free(v);
}

static int parse_tracepoint(struct cs_rec_events *l, const char *item,
			    const char *sys, const char *name, const char *mods,
			    const struct cs_rec_event_roots *roots,
			    struct cs_errbuf *eb)
{
	const char *tracefs = roots ? roots->tracefs : NULL;
	char events_dir[4096];
	char **systems;
	long nsys;
	size_t before = l->nr;
	uint64_t flags;
	int err;

	err = parse_mods(mods, item, &flags, eb);
	if (err)
		return err;
	if (!tracefs && cs_rec_tracefs_find(&tracefs))
		return cs_error(eb, -ENOENT, "event '%s': tracepoints need tracefs, "
				"which is not mounted (mount -t tracefs nodev "
				"/sys/kernel/tracing)", item);
	snprintf(events_dir, sizeof(events_dir), "%s/events", tracefs);
	if (!is_glob(sys) && !is_glob(name))
		return add_tracepoint(l, events_dir, sys, name, mods, flags, eb);

	nsys = list_dirs(events_dir, sys, &systems);
	if (nsys == -EACCES || nsys == -EPERM)
		return cs_error(eb, -EACCES, "no permission to read %s: tracepoints "
				"need root (or access to tracefs)", events_dir);
	if (nsys < 0)
		return cs_error(eb, (int)nsys, "cannot list %s: %s", events_dir,
				strerror((int)-nsys));
	for (long i = 0; i < nsys && !err; i++) {
		char dir[4096], **names;
		long n;

		if (snprintf(dir, sizeof(dir), "%s/%s", events_dir, systems[i]) >=
		    (int)sizeof(dir))
			continue;
		n = list_dirs(dir, name, &names);
		if (n == -ENOMEM)
			err = -ENOMEM;
		for (long j = 0; j < n && !err; j++) {
			char id[4096 + 256];

			/* a directory of a system is an event if it has an id */
			if (snprintf(id, sizeof(id), "%s/%s/id", dir, names[j]) >=
			    (int)sizeof(id) || access(id, R_OK))
				continue;
			err = add_tracepoint(l, events_dir, systems[i], names[j], mods,
					     flags, eb);
		}
		if (n > 0)
			free_names(names, n);
	}
	free_names(systems, nsys);
	if (!err && l->nr == before)
		err = cs_error(eb, -ENOENT, "no tracepoint matches '%s:%s' (see %s)",
			       sys, name, events_dir);
	return err;
}

/* ---- one item, one argument ----------------------------------------------- */

static bool is_raw(const char *s, size_t len)
{
	if (len < 2 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int parse_item(struct cs_rec_events *l, const char *item,
		      const struct cs_rec_event_roots *roots, struct cs_errbuf *eb)
{
	struct cs_rec_event e = { 0 };
	size_t head_len = strcspn(item, ":");
	const char *mods = item[head_len] ? item + head_len + 1 : "";
	char head[256];
	int err;

	if (!*item)
		return cs_error(eb, -EINVAL, "an empty event name");
	if (strchr(item, '/'))
		return parse_pmu(l, item, roots, eb);
	if (head_len >= sizeof(head))
		return cs_error(eb, -EINVAL, "event name too long: '%.40s...'", item);
	memcpy(head, item, head_len);
	head[head_len] = '\0';

	for (size_t i = 0; i < sizeof(symbolic) / sizeof(symbolic[0]); i++)
		if (!strcmp(head, symbolic[i].name)) {
			e.type = symbolic[i].type;
			e.config = symbolic[i].config;
			goto found;
		}
	if (is_raw(head, head_len)) {
		e.type = CS_PERF_TYPE_RAW;
		e.config = strtoull(head + 1, NULL, 16);
		goto found;
	}
	if (parse_cache(head, &e.config)) {
		e.type = CS_PERF_TYPE_HW_CACHE;
		goto found;
	}
	if (*mods) {
		/* SYSTEM:NAME[:MODS] */
		size_t name_len = strcspn(mods, ":");
		char name[256];

		if (name_len >= sizeof(name) || !name_len)
			return cs_error(eb, -EINVAL, "event '%s': a tracepoint reads "
					"SYSTEM:NAME", item);
		memcpy(name, mods, name_len);
		name[name_len] = '\0';
		return parse_tracepoint(l, item, head, name,
					mods[name_len] ? mods + name_len + 1 : "",
					roots, eb);
	}
	return cs_error(eb, -EINVAL, "unknown event '%s' (a name such as cycles or "
			"cpu-clock, rHEX, PMU/TERMS/, or SYSTEM:TRACEPOINT)", item);
found:
	err = parse_mods(mods, item, &e.flags, eb);
	if (err)
		return err;
	e.name = strdup(item);
	return push(l, &e);
}

int cs_rec_events_parse(struct cs_rec_events *l, const char *arg,
			const struct cs_rec_event_roots *roots,
			struct cs_errbuf *eb)
{
	struct cs_rec_events add = { 0 };
	const char *p = arg;
	int err = 0;

	if (strpbrk(arg, "{}"))
		return cs_error(eb, -EINVAL, "event '%s': event groups ({...}) are "
				"not supported", arg);
	do {
		/* a comma ends an item unless it is between a PMU's slashes */
		size_t len = 0;
		bool in_pmu = false;
		char *item;

		for (; p[len] && (in_pmu || p[len] != ','); len++)
			if (p[len] == '/')
				in_pmu = !in_pmu;
		item = strndup(p, len);
		if (!item) {
			err = -ENOMEM;
			break;
		}
		err = parse_item(&add, item, roots, eb);
		free(item);
		p += len;
	} while (!err && *p++ == ',');

	if (!err) {
		struct cs_rec_event *v = realloc(l->v, (l->nr + add.nr) * sizeof(*v));

		if (v) {
			memcpy(v + l->nr, add.v, add.nr * sizeof(*v));
			l->v = v;
			l->nr += add.nr;
			free(add.v);
			return 0;
		}
		err = -ENOMEM;
	}
	cs_rec_events_free(&add);
	if (err == -ENOMEM)
		return cs_error(eb, err, "%s", strerror(ENOMEM));
	return err;
}
