/* What the files of the automatic policy share: autoplace.c runs the cycle
 * and each group's experiment, autoplace-members.c seats a group's members
 * and puts them back, autoplace-groups.c follows each group's life (built
 * from a sample, merged with those followed, ended). */
#pragma once

#include "autoplace.h"
#include "learned.h"
#include "room.h"

/* A group unseen for this many samples has ended: its members get their
 * originals back. Short gaps (a pipeline between two files) keep it, and
 * its CCX; a group whose members have all exited has ended at once. */
#define AUTOPLACE_RELEASE_AFTER 5
/* Moves started per sample, so that a burst of new groups is seated a few at
 * a time and each experiment's window is not disturbed by all the others. */
#define AUTOPLACE_MOVES_PER_CYCLE 4


struct autoplace {
	const char *root;
	struct placements *placements;   /* the members' entries are there */
	struct sampler *sampler;
	struct group_cut *cut;     /* the last sample's processes cut off by a split */
	size_t n_cut;
	struct sampler_result *sample;
	struct autoplace_group *groups;
	size_t n_groups, allocated_groups;
	struct learned *learned;   /* what won, per set of programs */
	struct autoplace_stats stats;
};

/* ---- autoplace-members.c: seating members, putting them back ---- */

/* Every member gets its original back, and is the policy's no more. */
void autoplace_release(struct autoplace *a, struct autoplace_group *g);

/* Whether g holds pid. */
bool autoplace_is_member(const struct autoplace_group *g, pid_t pid);

/* What g's room is counted from: every group as the room sees it
 * (room_group, in *groups, to be freed). -ENOMEM without memory. */
int autoplace_room_of(const struct autoplace *a, const struct topology *t, const struct autoplace_group *g,
		   struct room_view *v, struct room_group **groups);

/* Puts g's members in seating s on the CCX with room for it. -EXFULL when no
 * CCX has room, -ENOSPC when the CCX cannot seat them that way. */
int autoplace_seat(struct autoplace *a, const struct topology *t, struct autoplace_group *g, enum seating s);

/* The share of the time g's members wanted a CPU, since the last sample,
 * that they spent waiting for one; -1 when not known (the first reading,
 * members that changed). Each member's reading becomes its next baseline. */
double autoplace_members_waited(struct autoplace *a, struct autoplace_group *g);

/* ---- autoplace-groups.c: a group's life ---- */

/* Frees what g holds. */
void autoplace_group_clear(struct autoplace_group *g);

/* Whether pid is one of the processes some group holds or is made of: its
 * affinity is the groups' business. */
bool autoplace_in_a_group(void *userdata, pid_t pid);

/* The groups of sample, the pairs of those seen at the previous one
 * joined more easily (GROUPS_KEEP_FACTOR), and the processes a split left
 * alone (a->cut, for status only). */
int autoplace_build_groups(struct autoplace *a, const struct sampler_result *sample, const struct autoplace_options *o,
			double capacity, struct group **ret, size_t *n);

/* The fresh groups of the last sample (n), into those the policy follows:
 * one with a known group's id is that group, seen again. */
int autoplace_merge_groups(struct autoplace *a, struct group *fresh, size_t n);

/* Groups that ended: their members get their originals back. A group gone
 * quiet has ended after a few samples; one whose members now belong to
 * another group (a split along another channel, a stage that joined or
 * left) has ended at once, since a process is in one group at a time; and
 * so has one whose members all exited, so that its CCX is free for the
 * next at once. */
void autoplace_drop_ended(struct autoplace *a);

/* Kept groups that make many calls have them counted one in 16: what they
 * are kept on is settled, and a re-check (not kept while it runs) counts
 * every call again. */
void autoplace_thin_settled(struct autoplace *a);

/* Whether a rule or a hand placed any of grp's processes: rules win. */
bool autoplace_any_ruled(const struct autoplace *a, const struct group *grp);

/* Whose processes g holds, read now: a member whose owner cannot be read
 * (it ended) counts as a user of its own. */
enum groups_users autoplace_users_of(const struct autoplace *a, const struct autoplace_group *g);
