/* call_tree.h - an interned tree of (parent, frame) nodes.
 *
 * Stacks of a profile share their outer frames: main, the event loop, the
 * same few callers. Interned as a path of (parent, frame) nodes, a stack
 * costs a node only where it leaves every stack seen before it, so memory
 * grows with the distinct call paths, not with samples times depth.
 *
 * Nodes live in one array, indexed by their id (0, 1, ... in order of
 * first sight), found by a hash of (parent id, frame id); frames are the
 * caller's ids (for example from stack_agg.h's frame table). Interning
 * allocates only when the arrays double.
 */
#ifndef CS_CALL_TREE_H
#define CS_CALL_TREE_H

#include <stddef.h>
#include <stdint.h>

struct cs_tree;			/* opaque */

/* The parent of the nodes at the top of the tree */
#define CS_TREE_ROOT UINT32_MAX

/* Returns 0 and a new, empty tree in *out (the caller frees it with
 * cs_tree_free()), or -ENOMEM. */
int cs_tree_new(struct cs_tree **out);
void cs_tree_free(struct cs_tree *t);

/* The node for frame under parent (a node id or CS_TREE_ROOT), made the
 * first time: its id in *id. Returns 0 or -ENOMEM. */
int cs_tree_intern(struct cs_tree *t, uint32_t parent, uint32_t frame,
		   uint32_t *id);
/* The nodes of the path frames[0, n) under parent: ids[i] is frames[i]'s
 * under ids[i - 1] (under parent for i = 0), made where new. The same as
 * cs_tree_intern() node after node, faster where the path is new.
 * Returns 0 or -ENOMEM. */
int cs_tree_intern_path(struct cs_tree *t, uint32_t parent,
			const uint32_t *frames, size_t n, uint32_t *ids);

/* The same without making it: returns 0 and *id, -ENOENT, or -ENOMEM
 * (rebuilding the index after cs_tree_trim()). */
int cs_tree_find(struct cs_tree *t, uint32_t parent, uint32_t frame,
		 uint32_t *id);

/* Frees the index that finds nodes by (parent, frame), a third of the
 * tree's memory: reading nodes by id does not need it, and the next
 * cs_tree_intern() or cs_tree_find() builds it again. */
void cs_tree_trim(struct cs_tree *t);

size_t cs_tree_nr_nodes(const struct cs_tree *t);
/* The bytes the tree holds (its nodes, its index whole) */
size_t cs_tree_memory(const struct cs_tree *t);
/* The bytes of the new indexes that n more nodes would make it allocate
 * while the old one is still there (0: they fit in the index it has) */
size_t cs_tree_index_step(const struct cs_tree *t, size_t n);
uint32_t cs_tree_parent(const struct cs_tree *t, uint32_t id);
uint32_t cs_tree_frame(const struct cs_tree *t, uint32_t id);

#endif
