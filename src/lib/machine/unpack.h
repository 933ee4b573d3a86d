/* unpack.h - the archive `callstitch archive` writes (a zstd-compressed
 * tar in perf's build-id cache layout), unpacked for the dso lookup.
 *
 * The lookup reads files by path, so the archive is unpacked once into a
 * private temporary directory, searched like --symfs and removed with the
 * table. Only regular files under relative paths without ".." are taken:
 * an archive from elsewhere writes nowhere but there.
 */
#ifndef CS_UNPACK_H
#define CS_UNPACK_H

struct cs_errbuf;

/* Unpacks path. Returns 0 and the directory in *dir (free it with
 * cs_unpack_remove), or a negative errno with eb saying why. */
int cs_unpack(const char *path, char **dir, struct cs_errbuf *eb);

/* Removes the directory and everything in it, and frees dir. */
void cs_unpack_remove(char *dir);

#endif
