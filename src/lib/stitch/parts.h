/* parts.h - a stitched chain that comes in parts, read whole.
 *
 * With chain_parts a stitched sample's stack is its kernel part (chain),
 * then its user part (user); with user_marker_implied the user part may
 * leave out the CS_CONTEXT_USER marker that goes before it (callstitch.h,
 * cs_stitched.user). Whoever joins or walks the parts asks here, so that
 * the rule is written once.
 */
#ifndef CS_STITCH_PARTS_H
#define CS_STITCH_PARTS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <callstitch/callstitch.h>

/* Whether the CS_CONTEXT_USER marker before s->user is implied: a user
 * part that does not begin with a marker of its own. Without
 * user_marker_implied the stitcher always stores one, so this is false
 * for every chain a caller built before the option. */
static inline bool cs_parts_marker_implied(const struct cs_stitched *s)
{
	return s->user_nr && s->user[0] != CS_CONTEXT_USER &&
	       s->user[0] != CS_CONTEXT_USER_DEFERRED;
}

/* Entries of the whole stack: kernel part, implied marker, user part. */
static inline uint64_t cs_parts_nr(const struct cs_stitched *s)
{
	return s->chain_nr + cs_parts_marker_implied(s) + s->user_nr;
}

/* Writes the whole stack into out, which has room for cs_parts_nr(s)
 * entries; returns how many it wrote. */
static inline uint64_t cs_parts_join(const struct cs_stitched *s,
				     uint64_t *out)
{
	uint64_t n = s->chain_nr;

	if (n)
		memcpy(out, s->chain, n * sizeof(*out));
	if (cs_parts_marker_implied(s))
		out[n++] = CS_CONTEXT_USER;
	if (s->user_nr)
		memcpy(out + n, s->user, s->user_nr * sizeof(*out));
	return n + s->user_nr;
}

#endif
