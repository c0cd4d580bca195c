/* ccxd's replies as text for people, one function for each view. Each
 * first escapes every string of the reply, in place (text_escape_json()):
 * what processes and users named reaches the terminal as text, never as
 * control characters. A reply of any shape prints without harm. */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

void print_status(FILE *f, json_object *status);
/* GetTopology's reply, or one made by ccxctl itself */
void print_topology(FILE *f, json_object *topology);
void print_rules(FILE *f, json_object *rules);
/* What Pin and Unpin did: "VERB COMM[PID]: REASON" */
void print_placed(FILE *f, json_object *reply, const char *verb);
void print_reloaded(FILE *f, json_object *reply);
/* The daemon's line of ccxctl version */
void print_version(FILE *f, json_object *version);
/* An error reply: "WHO: MESSAGE (ERROR)", then the errors it lists, a line each */
void print_error(FILE *f, const char *who, json_object *reply, const char *error);

/* ccxctl explain: io.ccxd.Explain's reply, with what status holds of the
 * process added (placement, group, alone, automatic, sampling). */
void print_explained(FILE *f, json_object *explained);

/* What ccxd remembers per set of programs (GetLearned's reply). */
void print_learned(FILE *f, json_object *learned);

/* ccxctl recommend (ccxctl-recommend.c): from a status, the kept groups'
 * programs as rules, {"rules": [{name, exe, ccx: [N], group, seating, gain,
 * noise}], "left_out": [PROGRAM]}; a program whose name or path a rule
 * cannot hold as it is goes to left_out. And those rules as a drop-in. */
json_object *recommend_rules(json_object *status);
void print_recommended(FILE *f, json_object *rules);
