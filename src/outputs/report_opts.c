/* report_opts.c - pid, tid and name lists of the summarising commands. */
#include "outputs/report_opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cs_id_list_parse(struct cs_id_list *l, const char *arg)
{
	const char *p = arg;

	do {
		char *end;
		unsigned long long v;
		uint32_t *q;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (errno || v > UINT32_MAX || (*end && *end != ','))
			return -EINVAL;
		q = realloc(l->v, (l->nr + 1) * sizeof(*q));
		if (!q)
			return -ENOMEM;
		l->v = q;
		l->v[l->nr++] = (uint32_t)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

bool cs_id_list_has(const struct cs_id_list *l, uint32_t id)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->v[i] == id)
			return true;
	return false;
}

void cs_id_list_free(struct cs_id_list *l)
{
	free(l->v);
	l->v = NULL;
	l->nr = 0;
}

int cs_name_list_parse(struct cs_name_list *l, const char *arg)
{
	const char *p = arg;

	for (;;) {
		size_t n = strcspn(p, ",");
		char **q;

		if (!n)
			return -EINVAL;
		q = realloc(l->v, (l->nr + 1) * sizeof(*q));
		if (!q)
			return -ENOMEM;
		l->v = q;
		l->v[l->nr] = strndup(p, n);
		if (!l->v[l->nr])
			return -ENOMEM;
		l->nr++;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

bool cs_name_list_has(const struct cs_name_list *l, const char *name)
{
	if (!name)
		return false;
	for (size_t i = 0; i < l->nr; i++)
		if (!strcmp(l->v[i], name))
			return true;
	return false;
}

void cs_name_list_free(struct cs_name_list *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->nr = 0;
}
