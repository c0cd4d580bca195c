/* ccxctl probe --svg: the latency matrix as an SVG heatmap. */
#pragma once

#include <json-c/json.h>

/* Writes the matrix of the probe's JSON j to path, saying on stderr what it
 * wrote or why it could not (no matrix: run with --matrix). 0 or -errno. */
int svg_write_heatmap(const char *path, json_object *j);
