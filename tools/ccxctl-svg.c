/* ccxctl probe --svg: the CPU x CPU latency matrix of the probe's JSON as
 * an SVG heatmap. */
#include "ccxctl-svg.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ccxctl-json.h"

/* Viridis, sampled: dark for fast, bright for slow, and readable by the
 * colour-blind and in greyscale. */
static void colour_of(double f, char *buf, size_t size) {
	static const unsigned char stops[][3] = {
		{ 0x44, 0x01, 0x54 }, { 0x3b, 0x52, 0x8b }, { 0x21, 0x91, 0x8c }, { 0x5e, 0xc9, 0x62 }, { 0xfd, 0xe7, 0x25 },
	};
	double x = (f < 0 ? 0 : f > 1 ? 1 : f) * 4;
	int i = x >= 4 ? 3 : (int)x;
	double w = x - i;

	unsigned rgb[3];

	for (int c = 0; c < 3; c++)
		rgb[c] = (unsigned)(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * w + 0.5);
	snprintf(buf, size, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static void text_escaped(FILE *f, const char *s) {
	for (; s && *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
}

struct heatmap {
	size_t n;
	int *cpu, *ccx;
	double *ns;               /* n x n, NAN where not measured */
	double lo, hi;
};

static int heatmap_from_json(json_object *m, struct heatmap *h) {
	json_object *cpus = jget(m, "cpus"), *ccx = jget(m, "ccx"), *rows = jget(m, "latency_ns");
	size_t n = jlen(cpus);

	*h = (struct heatmap){ .n = n, .lo = INFINITY, .hi = -INFINITY };
	if (n == 0 || jlen(ccx) != n || jlen(rows) != n)
		return -EBADMSG;
	h->cpu = calloc(n, sizeof(int));
	h->ccx = calloc(n, sizeof(int));
	h->ns = calloc(n * n, sizeof(double));
	if (!h->cpu || !h->ccx || !h->ns)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *row = json_object_array_get_idx(rows, i);
		h->cpu[i] = json_object_get_int(json_object_array_get_idx(cpus, i));
		h->ccx[i] = json_object_get_int(json_object_array_get_idx(ccx, i));
		for (size_t k = 0; k < n; k++) {
			json_object *v = jlen(row) == n ? json_object_array_get_idx(row, k) : NULL;
			double x = v ? json_object_get_double(v) : NAN;
			h->ns[i * n + k] = x;
			if (isfinite(x)) {
				h->lo = x < h->lo ? x : h->lo;
				h->hi = x > h->hi ? x : h->hi;
			}
		}
	}
	return 0;
}

static void heatmap_free(struct heatmap *h) {
	free(h->cpu);
	free(h->ccx);
	free(h->ns);
}

/* Where each part of the picture goes. */
struct layout {
	int left, top, cell, grid;
	int legend_x, legend_h, width, height;
	int label_every;
};

static struct layout layout_of(const struct heatmap *h) {
	struct layout l = { .left = 70, .top = 96 };

	l.cell = h->n <= 15 ? 48 : (int)(720 / h->n) < 3 ? 3 : (int)(720 / h->n);
	l.grid = l.cell * (int)h->n;
	l.legend_x = l.left + l.grid + 40;
	l.legend_h = l.grid < 240 ? 240 : l.grid;
	l.label_every = l.cell >= 14 ? 1 : (14 + l.cell - 1) / l.cell;
	l.width = l.legend_x + 150 < 760 ? 760 : l.legend_x + 150;
	l.height = l.top + l.legend_h + 90;
	return l;
}

/* The title, and the CCX names over their blocks: just the number where
 * "CCX n" does not fit, nothing where that does not either. */
static void write_title(FILE *f, json_object *j, const struct heatmap *h, const struct layout *l) {
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", l->width, l->height, l->width, l->height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"16\" font-weight=\"bold\">Core-to-core latency "
		   "(cache-line ping-pong, one way)</text>\n", l->left);
	fprintf(f, "<text x=\"%d\" y=\"44\">", l->left);
	text_escaped(f, jstr(j, "topology"));
	fprintf(f, ", %zu CPUs, measured ", h->n);
	text_escaped(f, jstr(j, "date"));
	fprintf(f, " by ccxctl probe</text>\n");
	for (size_t i = 0; i < h->n;) {
		size_t end = i;
		while (end < h->n && h->ccx[end] == h->ccx[i])
			end++;
		if ((int)(end - i) * l->cell >= 16)
			fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">%s%d</text>\n",
				l->left + (int)(i + end) * l->cell / 2, l->top - 28, (int)(end - i) * l->cell >= 44 ? "CCX " : "",
				h->ccx[i]);
		i = end;
	}
}

/* A cell per pair, its value as a tooltip, and in the cell where it fits. */
static void write_cells(FILE *f, const struct heatmap *h, const struct layout *l) {
	char colour[16];

	fprintf(f, "<g shape-rendering=\"crispEdges\">\n");
	for (size_t i = 0; i < h->n; i++)
		for (size_t k = 0; k < h->n; k++) {
			double v = h->ns[i * h->n + k];
			if (isfinite(v))
				colour_of(h->hi > h->lo ? (v - h->lo) / (h->hi - h->lo) : 0, colour, sizeof(colour));
			else
				snprintf(colour, sizeof(colour), "#e0e0e0");
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\">",
				l->left + (int)k * l->cell, l->top + (int)i * l->cell, l->cell, l->cell, colour);
			if (isfinite(v))
				fprintf(f, "<title>CPU %d - CPU %d: %.1f ns</title>", h->cpu[i], h->cpu[k], v);
			else
				fprintf(f, "<title>CPU %d: same CPU, not measured</title>", h->cpu[i]);
			fprintf(f, "</rect>\n");
		}
	fprintf(f, "</g>\n");
	if (l->cell < 36)
		return;
	for (size_t i = 0; i < h->n; i++)
		for (size_t k = 0; k < h->n; k++) {
			double v = h->ns[i * h->n + k], fr = h->hi > h->lo ? (v - h->lo) / (h->hi - h->lo) : 0;
			if (!isfinite(v))
				continue;
			fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" fill=\"%s\">%.0f</text>\n",
				l->left + (int)k * l->cell + l->cell / 2, l->top + (int)i * l->cell + l->cell / 2 + 4,
				fr > 0.6 ? "black" : "white", v);
		}
}

/* The CPUs on both axes, and the CCX boundaries across the whole grid. */
static void write_axes(FILE *f, const struct heatmap *h, const struct layout *l) {
	for (size_t i = 0; i < h->n; i += (size_t)l->label_every) {
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"10\">%d</text>\n", l->left - 4,
			l->top + (int)i * l->cell + l->cell / 2 + 4, h->cpu[i]);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%d</text>\n",
			l->left + (int)i * l->cell + l->cell / 2, l->top - 6, h->cpu[i]);
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\" text-anchor=\"middle\">CPU</text>\n",
		l->left - 40, l->top + l->grid / 2, l->left - 40, l->top + l->grid / 2);
	fprintf(f, "<g stroke=\"black\" fill=\"none\">\n");
	for (size_t i = 1; i < h->n; i++)
		if (h->ccx[i] != h->ccx[i - 1]) {
			int p = l->left + (int)i * l->cell, q = l->top + (int)i * l->cell;
			fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke-width=\"2\"/>\n", p, l->top, p,
				l->top + l->grid);
			fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke-width=\"2\"/>\n", l->left, q,
				l->left + l->grid, q);
		}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" stroke-width=\"2\"/>\n", l->left, l->top,
		l->grid, l->grid);
	fprintf(f, "</g>\n");
}

/* The legend: a gradient from the fastest pair to the slowest, and what the
 * grey cells and the lines mean. */
static void write_legend(FILE *f, const struct heatmap *h, const struct layout *l) {
	bool measured = isfinite(h->lo);
	int x = l->legend_x, top = l->top, below = l->top + l->legend_h;
	char colour[16];

	fprintf(f, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n");
	for (int s = 0; s <= 10; s++) {
		colour_of(s / 10.0, colour, sizeof(colour));
		fprintf(f, "<stop offset=\"%.1f\" stop-color=\"%s\"/>\n", s / 10.0, colour);
	}
	fprintf(f, "</linearGradient></defs>\n");
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">latency, ns</text>\n", x, top - 10);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"%d\" fill=\"url(#scale)\" stroke=\"black\"/>\n",
		x, top, l->legend_h);
	for (int s = 0; measured && s <= (h->hi > h->lo ? 4 : 0); s++) {
		double v = h->hi - (h->hi - h->lo) * s / 4;
		int y = top + l->legend_h * s / 4;
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", x + 24, y, x + 30, y);
		fprintf(f, "<text x=\"%d\" y=\"%d\">%.1f</text>\n", x + 34, y + 4, v);
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"#e0e0e0\" stroke=\"black\"/>\n",
		l->left, below + 20);
	fprintf(f, "<text x=\"%d\" y=\"%d\">same CPU: not measured</text>\n", l->left + 20, below + 32);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>\n",
		l->left + 200, below + 27, l->left + 230, below + 27);
	fprintf(f, "<text x=\"%d\" y=\"%d\">CCX boundary (one L3)</text>\n", l->left + 236, below + 32);
	fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">Hover over a cell for its value. Dark: fast, bright: slow "
		   "(%.1f to %.1f ns).</text>\n", l->left, below + 56, measured ? h->lo : 0, measured ? h->hi : 0);
}

/* Writes the heatmap: CPUs in CCX order on both axes, a cell per pair with
 * its value as a tooltip, CCX boundaries as lines, a colour legend in ns. */
static void write_heatmap(FILE *f, json_object *j, const struct heatmap *h) {
	struct layout l = layout_of(h);

	write_title(f, j, h, &l);
	write_cells(f, h, &l);
	write_axes(f, h, &l);
	write_legend(f, h, &l);
	fprintf(f, "</svg>\n");
}

int svg_write_heatmap(const char *path, json_object *j) {
	struct heatmap h;
	FILE *f;
	int r = jget(j, "matrix") ? heatmap_from_json(jget(j, "matrix"), &h) : -ENODATA;

	if (r == -ENODATA) {
		fprintf(stderr, "ccxctl probe: no latency matrix to draw (run with --matrix)\n");
		return r;
	}
	if (r < 0) {
		fprintf(stderr, "ccxctl probe: the latency matrix is malformed\n");
		heatmap_free(&h);
		return r;
	}
	f = fopen(path, "we");
	if (!f) {
		r = -errno;
		fprintf(stderr, "ccxctl probe: cannot write %s: %s\n", path, strerror(-r));
		heatmap_free(&h);
		return r;
	}
	write_heatmap(f, j, &h);
	heatmap_free(&h);
	if (ferror(f) | (fclose(f) != 0)) {
		fprintf(stderr, "ccxctl probe: writing %s failed\n", path);
		return -EIO;
	}
	fprintf(stderr, "ccxctl probe: wrote the latency heatmap to %s\n", path);
	return 0;
}
