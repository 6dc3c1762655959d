/* Tercom's greedy shift search (Snover et al. 2006, §3), one pair at a time in C.
 *
 * The same search as combo/metrics/lexical/ter_alignment.py (its module docstring lists the heuristics,
 * which follow sacreBLEU 2.6.0's lib_ter.py): the beam edit distance, its back-trace preferring
 * match/substitution, then dropping a hypothesis word, then inserting a reference word; candidate moves
 * enumerated in sacreBLEU's order, ranked by (gain, length, -start, -target); 1,000 candidates per pair.
 *
 * Speed: the matrix is stored as its band only (row i holds columns [lo_i, hi_i)); each round fills the
 * forward matrix F and the backward matrix B (B[i][j]: fewest edits from cell (i, j) to the end inside the
 * band), and a move that rewrites hypothesis rows (lo, hi] costs only those rows:
 * distance = min_j F'[hi][j] + B[hi][j], with F' restarted from F's row lo.
 *
 * Interface: edit_counts(hyp_ids, hyp_offsets, ref_ids, ref_offsets, out), all C-contiguous int64 buffers;
 * pair p is hyp_ids[hyp_offsets[p]:hyp_offsets[p + 1]] against ref_ids[ref_offsets[p]:...]; out[p] gets
 * its edits (shifts + beam edit distance). The GIL is released while it runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define BEAM_WIDTH 25
#define MAX_SHIFT_CANDIDATES 1000
#define INF (1 << 29) /* 'unreachable': larger than any distance (texts are limited to 10,000 words) */

typedef struct {
    int64_t n_hyp, n_ref;
    int64_t *lo, *hi, *start; /* row i: columns [lo[i], hi[i]) stored from start[i] */
    int32_t *fwd, *bwd;       /* band cells, row after row */
    int64_t cells;
} Band;

static inline int32_t cell(const Band *b, const int32_t *m, int64_t i, int64_t j)
{
    if (j < b->lo[i] || j >= b->hi[i]) return INF;
    return m[b->start[i] + j - b->lo[i]];
}

static inline int32_t min3(int32_t a, int32_t b, int32_t c)
{
    int32_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* The band of each row, as sacreBLEU's BeamEditDistance: row 0 full, row i centred on
 * floor(i * |ref| / |hyp|), the last row reaching the last column. */
static int band_init(Band *b, int64_t n_hyp, int64_t n_ref)
{
    b->n_hyp = n_hyp;
    b->n_ref = n_ref;
    b->lo = malloc(sizeof(int64_t) * (size_t)(n_hyp + 1));
    b->hi = malloc(sizeof(int64_t) * (size_t)(n_hyp + 1));
    b->start = malloc(sizeof(int64_t) * (size_t)(n_hyp + 1));
    if (!b->lo || !b->hi || !b->start) return -1;
    double ratio = n_hyp > 0 ? (double)n_ref / (double)n_hyp : 1.0;
    int64_t width = BEAM_WIDTH < ratio / 2 ? (int64_t)ceil(ratio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
    int64_t total = 0;
    for (int64_t i = 0; i <= n_hyp; i++) {
        int64_t lo = 0, hi = n_ref + 1;
        if (i > 0) {
            int64_t diag = (int64_t)floor((double)i * ratio);
            lo = diag - width > 0 ? diag - width : 0;
            hi = diag + width < n_ref + 1 ? diag + width : n_ref + 1;
            if (i == n_hyp) hi = n_ref + 1;
            if (hi < lo) hi = lo;
        }
        b->lo[i] = lo;
        b->hi[i] = hi;
        b->start[i] = total;
        total += hi - lo;
    }
    b->cells = total;
    b->fwd = malloc(sizeof(int32_t) * (size_t)(total + 1));
    b->bwd = malloc(sizeof(int32_t) * (size_t)(total + 1));
    return b->fwd && b->bwd ? 0 : -1;
}

static void band_free(Band *b)
{
    free(b->lo);
    free(b->hi);
    free(b->start);
    free(b->fwd);
    free(b->bwd);
}

/* Row i of the forward matrix into `row` (columns [lo[i], hi[i])), from row i - 1 in `prev`
 * (stored as row i - 1 of `b`, or any array laid out like it when prev_lo/prev_hi are given). */
static void forward_row(const Band *b, int64_t i, int64_t word, const int64_t *ref,
                        const int32_t *prev, int64_t prev_lo, int64_t prev_hi, int32_t *row)
{
    int64_t lo = b->lo[i], hi = b->hi[i];
    int32_t left = INF;
    for (int64_t j = lo; j < hi; j++) {
        int32_t up = (j >= prev_lo && j < prev_hi) ? prev[j - prev_lo] : INF;
        int32_t v = up + 1; /* drop a hypothesis word */
        if (j > 0) {
            int32_t diag = (j - 1 >= prev_lo && j - 1 < prev_hi) ? prev[j - 1 - prev_lo] : INF;
            v = min3(diag + (word != ref[j - 1]), v, left + 1);
        }
        if (v > INF) v = INF;
        row[j - lo] = v;
        left = v;
    }
}

static void fill_forward(Band *b, const int64_t *hyp, const int64_t *ref)
{
    for (int64_t j = 0; j <= b->n_ref; j++) b->fwd[j] = (int32_t)j;
    for (int64_t i = 1; i <= b->n_hyp; i++)
        forward_row(b, i, hyp[i - 1], ref, b->fwd + b->start[i - 1], b->lo[i - 1], b->hi[i - 1],
                    b->fwd + b->start[i]);
}

/* B[i][j]: fewest edits from cell (i, j) to (|hyp|, |ref|) through cells of the band. */
static void fill_backward(Band *b, const int64_t *hyp, const int64_t *ref)
{
    int64_t n_hyp = b->n_hyp, n_ref = b->n_ref;
    for (int64_t i = n_hyp; i >= 0; i--) {
        int32_t *row = b->bwd + b->start[i];
        int64_t lo = b->lo[i], hi = b->hi[i];
        int32_t right = INF;
        for (int64_t j = hi - 1; j >= lo; j--) {
            int32_t v;
            if (i == n_hyp && j == n_ref) {
                v = 0;
            } else {
                v = right + 1; /* insert reference word j */
                if (i < n_hyp) {
                    v = min3(v, cell(b, b->bwd, i + 1, j) + 1,
                             j < n_ref ? cell(b, b->bwd, i + 1, j + 1) + (hyp[i] != ref[j]) : INF);
                }
                if (v > INF) v = INF;
            }
            row[j - lo] = v;
            right = v;
        }
    }
}

/* Back-trace of the forward matrix (sacreBLEU's preference: match/substitution, then dropping a
 * hypothesis word, then inserting a reference word): align[r] = the hypothesis position reference word r
 * is aligned to (for an inserted one, the position before it), and error flags. */
static void trace(const Band *b, const int64_t *hyp, const int64_t *ref,
                  int64_t *align, char *hyp_err, char *ref_err)
{
    int64_t i = b->n_hyp, j = b->n_ref;
    while (i > 0 || j > 0) {
        int32_t v = cell(b, b->fwd, i, j);
        int step; /* 0 diagonal, 1 drop hypothesis word, 2 insert reference word */
        if (i == 0) {
            step = 2;
        } else if (j == 0) {
            step = 1;
        } else if (cell(b, b->fwd, i - 1, j - 1) + (hyp[i - 1] != ref[j - 1]) == v) {
            step = 0;
        } else if (cell(b, b->fwd, i - 1, j) + 1 == v) {
            step = 1;
        } else {
            step = 2;
        }
        if (step == 0) {
            char err = hyp[i - 1] != ref[j - 1];
            hyp_err[i - 1] = err;
            ref_err[j - 1] = err;
            align[j - 1] = i - 1;
            i--;
            j--;
        } else if (step == 1) {
            hyp_err[i - 1] = 1;
            i--;
        } else {
            ref_err[j - 1] = 1;
            align[j - 1] = i - 1;
            j--;
        }
    }
}

/* The words after moving [start, start + length) in front of `target` (sacreBLEU's _perform_shift),
 * and the rows [lo, hi) it rewrites. */
static void perform_shift(const int64_t *words, int64_t n, int64_t start, int64_t length, int64_t target,
                          int64_t *out, int64_t *lo, int64_t *hi)
{
    memcpy(out, words, sizeof(int64_t) * (size_t)n);
    if (target < start) {
        memcpy(out + target, words + start, sizeof(int64_t) * (size_t)length);
        memcpy(out + target + length, words + target, sizeof(int64_t) * (size_t)(start - target));
        *lo = target;
        *hi = start + length;
    } else if (target > start + length) {
        memcpy(out + start, words + start + length, sizeof(int64_t) * (size_t)(target - start - length));
        memcpy(out + target - length, words + start, sizeof(int64_t) * (size_t)length);
        *lo = start;
        *hi = target;
    } else {
        /* within its own reach: words[:start] + words[start+length : length+target] + block + rest */
        int64_t end = length + target < n ? length + target : n;
        int64_t k = start;
        for (int64_t s = start + length; s < end; s++) out[k++] = words[s];
        for (int64_t s = start; s < start + length; s++) out[k++] = words[s];
        *lo = start;
        *hi = end;
    }
}

/* Beam edit distance of `shifted`, which differs from the current hypothesis in rows (lo, hi] only. */
static int32_t moved_distance(const Band *b, const int64_t *shifted, const int64_t *ref, int64_t lo, int64_t hi,
                              int32_t *row_a, int32_t *row_b)
{
    const int32_t *prev = b->fwd + b->start[lo];
    int64_t prev_lo = b->lo[lo], prev_hi = b->hi[lo];
    int32_t *rows[2] = {row_a, row_b};
    int32_t *row = row_a;
    for (int64_t i = lo + 1; i <= hi; i++) {
        row = rows[i & 1];
        forward_row(b, i, shifted[i - 1], ref, prev, prev_lo, prev_hi, row);
        prev = row;
        prev_lo = b->lo[i];
        prev_hi = b->hi[i];
    }
    const int32_t *back = b->bwd + b->start[hi];
    int32_t best = INF;
    for (int64_t j = b->lo[hi]; j < b->hi[hi]; j++) {
        int32_t v = prev[j - prev_lo] + back[j - prev_lo];
        if (v < best) best = v;
    }
    return best;
}

typedef struct {
    int64_t *words, *shifted, *align;
    char *hyp_err, *ref_err;
    int32_t *row_a, *row_b;
} Scratch;

/* A candidate move: the block [start, start + length) in front of `target`, and the edits it saves. */
typedef struct {
    int32_t gain;
    int64_t length, start, target;
} Move;

/* sacreBLEU's ranking of moves: (gain, length, -start, -target), the larger first. */
static int ranks_above(const Move *m, const Move *best)
{
    if (m->gain != best->gain) return m->gain > best->gain;
    if (m->length != best->length) return m->length > best->length;
    if (m->start != best->start) return m->start < best->start;
    return m->target < best->target;
}

/* One round of the greedy search on `words`, whose forward and backward matrices and alignment are filled:
 * the best move with a positive gain (gain 0 when there is none), enumerated in sacreBLEU's order;
 * `checked` counts every candidate, as sacreBLEU does, and the round stops once it reaches the cap. */
static Move best_move(const Band *b, const int64_t *words, const int64_t *ref, int32_t now, Scratch *s,
                      int64_t *checked)
{
    int64_t n_hyp = b->n_hyp, n_ref = b->n_ref;
    Move best = {0, 0, 0, 0};
    for (int64_t sh = 0; sh < n_hyp && *checked < MAX_SHIFT_CANDIDATES; sh++) {
        int64_t r_from = sh - MAX_SHIFT_DIST > 0 ? sh - MAX_SHIFT_DIST : 0;
        int64_t r_to = sh + MAX_SHIFT_DIST + 1 < n_ref ? sh + MAX_SHIFT_DIST + 1 : n_ref;
        for (int64_t sr = r_from; sr < r_to && *checked < MAX_SHIFT_CANDIDATES; sr++) {
            int hyp_errs = 0, ref_errs = 0;
            for (int64_t length = 1; length <= MAX_SHIFT_SIZE && sh + length <= n_hyp && sr + length <= n_ref
                                     && words[sh + length - 1] == ref[sr + length - 1]; length++) {
                hyp_errs += s->hyp_err[sh + length - 1];
                ref_errs += s->ref_err[sr + length - 1];
                if (!hyp_errs || !ref_errs) continue;
                if (sh <= s->align[sr] && s->align[sr] < sh + length) continue;
                int64_t prev_idx = -1;
                for (int64_t offset = -1; offset < length; offset++) {
                    int64_t idx = sr + offset == -1 ? 0 : s->align[sr + offset] + 1;
                    if (idx == prev_idx) continue;
                    prev_idx = idx;
                    ++*checked;
                    if (idx == sh) continue; /* moved in front of itself: no change, no gain */
                    int64_t lo, hi;
                    perform_shift(words, n_hyp, sh, length, idx, s->shifted, &lo, &hi);
                    Move m = {now - moved_distance(b, s->shifted, ref, lo, hi, s->row_a, s->row_b), length, sh, idx};
                    if (m.gain > 0 && ranks_above(&m, &best)) best = m;
                }
            }
        }
    }
    return best;
}

/* Edits (shifts + beam edit distance) of one pair, |ref| > 0; -1 when out of memory. */
static int64_t pair_edits(const int64_t *hyp, int64_t n_hyp, const int64_t *ref, int64_t n_ref, Scratch *s)
{
    Band b;
    memset(&b, 0, sizeof(b));
    if (band_init(&b, n_hyp, n_ref) < 0) {
        band_free(&b);
        return -1;
    }
    int64_t *words = s->words;
    memcpy(words, hyp, sizeof(int64_t) * (size_t)n_hyp);
    int64_t shifts = 0, checked = 0;
    int32_t now;
    for (;;) {
        fill_forward(&b, words, ref);
        now = b.fwd[b.start[n_hyp] + n_ref - b.lo[n_hyp]];
        trace(&b, words, ref, s->align, s->hyp_err, s->ref_err);
        fill_backward(&b, words, ref);
        Move best = best_move(&b, words, ref, now, s, &checked);
        if (checked >= MAX_SHIFT_CANDIDATES || best.gain <= 0) break; /* the round that reaches the cap is discarded */
        int64_t lo, hi;
        perform_shift(words, n_hyp, best.start, best.length, best.target, s->shifted, &lo, &hi);
        memcpy(words, s->shifted, sizeof(int64_t) * (size_t)n_hyp);
        shifts++;
    }
    band_free(&b);
    return shifts + now;
}

static int contiguous_int64(Py_buffer *view, const char *name)
{
    if (view->itemsize != 8 || view->len % 8) {
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous buffer of int64", name);
        return 0;
    }
    return 1;
}

static PyObject *edit_counts(PyObject *self, PyObject *args)
{
    Py_buffer hv, hov, rv, rov, ov;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*", &hv, &hov, &rv, &rov, &ov)) return NULL;
    PyObject *result = NULL;
    if (!contiguous_int64(&hv, "hyp_ids") || !contiguous_int64(&hov, "hyp_offsets")
        || !contiguous_int64(&rv, "ref_ids") || !contiguous_int64(&rov, "ref_offsets")
        || !contiguous_int64(&ov, "out"))
        goto done;
    Py_ssize_t n = ov.len / 8;
    if (hov.len / 8 != n + 1 || rov.len / 8 != n + 1) {
        PyErr_SetString(PyExc_ValueError, "offsets must hold one more entry than out");
        goto done;
    }
    const int64_t *hyp = hv.buf, *hyp_off = hov.buf, *ref = rv.buf, *ref_off = rov.buf;
    int64_t *out = ov.buf;
    int64_t longest_hyp = 1, longest_ref = 1;
    for (Py_ssize_t p = 0; p < n; p++) {
        int64_t nh = hyp_off[p + 1] - hyp_off[p], nr = ref_off[p + 1] - ref_off[p];
        if (nh < 0 || nr < 0 || hyp_off[p] < 0 || ref_off[p] < 0 || hyp_off[p + 1] > hv.len / 8
            || ref_off[p + 1] > rv.len / 8) {
            PyErr_SetString(PyExc_ValueError, "offsets out of range");
            goto done;
        }
        if (nh > longest_hyp) longest_hyp = nh;
        if (nr > longest_ref) longest_ref = nr;
    }
    Scratch s;
    s.words = malloc(sizeof(int64_t) * (size_t)longest_hyp);
    s.shifted = malloc(sizeof(int64_t) * (size_t)longest_hyp);
    s.align = malloc(sizeof(int64_t) * (size_t)longest_ref);
    s.hyp_err = malloc((size_t)longest_hyp);
    s.ref_err = malloc((size_t)longest_ref);
    s.row_a = malloc(sizeof(int32_t) * (size_t)(longest_ref + 1));
    s.row_b = malloc(sizeof(int32_t) * (size_t)(longest_ref + 1));
    int failed = !s.words || !s.shifted || !s.align || !s.hyp_err || !s.ref_err || !s.row_a || !s.row_b;
    if (!failed) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t p = 0; p < n && !failed; p++) {
            int64_t nh = hyp_off[p + 1] - hyp_off[p], nr = ref_off[p + 1] - ref_off[p];
            if (nr == 0) {
                out[p] = nh; /* an empty reference: one edit per hypothesis word */
                continue;
            }
            out[p] = pair_edits(hyp + hyp_off[p], nh, ref + ref_off[p], nr, &s);
            failed = out[p] < 0;
        }
        Py_END_ALLOW_THREADS
    }
    free(s.words);
    free(s.shifted);
    free(s.align);
    free(s.hyp_err);
    free(s.ref_err);
    free(s.row_a);
    free(s.row_b);
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&hv);
    PyBuffer_Release(&hov);
    PyBuffer_Release(&rv);
    PyBuffer_Release(&rov);
    PyBuffer_Release(&ov);
    return result;
}

static PyMethodDef methods[] = {
    {"edit_counts", edit_counts, METH_VARARGS,
     "edit_counts(hyp_ids, hyp_offsets, ref_ids, ref_offsets, out): TER edits of each pair into out "
     "(C-contiguous int64 buffers)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ter", "Tercom's shift search in C.", -1, methods};

PyMODINIT_FUNC PyInit__ter(void)
{
    return PyModule_Create(&module);
}
