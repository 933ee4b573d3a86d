/* replay.c - runs a harness's LLVMFuzzerTestOneInput() once on each file
 * named on the command line (or each file of a named directory), without
 * libFuzzer: the normal suite replays the seed corpus and every input that
 * ever crashed, hung or blew memory (tests/fuzz-regressions/) this way,
 * built with ASan and UBSan. A harness that breaks a rule aborts; a file
 * that cannot be read is an error (exit 2).
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long size;

	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return 2;
	}
	buf = malloc(size ? (size_t)size : 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		free(buf);
		fclose(f);
		return 2;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	free(buf);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int replay_dir(const char *dir, unsigned long *n)
{
	struct dirent **list;
	int nr = scandir(dir, &list, NULL, by_name), rc = 0;

	if (nr < 0) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return 2;
	}
	for (int i = 0; i < nr; i++) {
		char path[4096];

		if (list[i]->d_name[0] != '.' &&
		    snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name) <
		    (int)sizeof(path)) {
			struct stat st;

			if (!stat(path, &st) && S_ISREG(st.st_mode)) {
				rc |= replay_file(path);
				++*n;
			}
		}
		free(list[i]);
	}
	free(list);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (!stat(argv[i], &st) && S_ISDIR(st.st_mode)) {
			rc |= replay_dir(argv[i], &n);
		} else {
			rc |= replay_file(argv[i]);
			n++;
		}
	}
	printf("replayed %lu inputs\n", n);
	return rc;
}
