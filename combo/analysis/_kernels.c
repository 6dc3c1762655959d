/* Convolution tree kernels (SST, ST, PTK) in C, one tree pair at a time, equal to the bit to the batched numpy
 * kernels of combo/analysis/kernels.py (whose module docstring states the kernels).
 *
 * K(a, b) = sum over node pairs (n1, n2) of Delta(n1, n2):
 * - SST / ST (Collins & Duffy 2001, 2002; Moschitti 2006a, sigma = 1 / 0): Delta = 0 unless the productions
 *   of n1 and n2 are equal, else lambda * prod_j (sigma + Delta(c_j(n1), c_j(n2))), a pre-terminal giving
 *   lambda. Moschitti's (2006a) fast algorithm: only node pairs of equal productions are visited.
 * - PTK (Moschitti 2006b): Delta = 0 unless the labels are equal, else mu (lambda^2 + sum_p Delta_p), the
 *   sum over common child subsequences computed by one dynamic programme over the (children x children)
 *   table: T(x, y) = Delta(x, y) (1 + D(x-1, y-1)), D(x, y) = T(x, y) + lambda (D(x-1, y) + D(x, y-1))
 *   - lambda^2 D(x-1, y-1), sum_p Delta_p = sum of T. Pairs with a leaf, and two "unary" nodes (one child,
 *   a leaf), take closed forms, counted per label.
 *
 * Bits: every Delta is made of the same floating-point operations in the same order as the numpy batch
 * (setup.py compiles with -ffp-contract=off: no fused multiply-add). SST/ST: lambda * (f_1 * f_2 * ...)
 * over all children (a leaf child f = 1), the pair's Deltas added in increasing order from 0 (sorted),
 * then lambda * (pre-terminal matches) + that sum. PTK: 0 + the closed form, then each Delta added by
 * decreasing (i, j) pre-order ids, the order the node pairs are computed in (children first).
 *
 * Layout: the trees arrive end to end in pre-order, as label ids, child counts and tree offsets (what
 * kernels.py has without building the trees' indexes). Per call, each tree's structure is derived once:
 * children, heights, and either production ids (SST/ST, interned in a hash table: label, arity and the
 * ordered child codes 2 label + leaf) or unary flags (PTK); each tree's internal nodes are sorted by
 * (production or label, pre-order id), giving each node its rank in its group. For a pair, a group found
 * in both trees with c_a and c_b nodes gets a c_a x c_b block of a Delta table (cell rank_a * c_b + rank_b),
 * so a pair holds only its equal-key node pairs (what its kernel visits anyway); a pair needing more than
 * max_cells cells is not computed (its index is returned; kernels.py computes it in numpy).
 *
 * Interface: subset_tree(labels, arities, offsets, left, right, lam, sigma, max_cells, out) and
 * partial_tree(labels, arities, offsets, left, right, lam, mu, max_cells, out): int64 buffers (labels and
 * arities per node, offsets per tree + 1, left / right tree numbers per pair), out a float64 buffer per pair.
 * Return the list of pairs left out. The GIL is released while they compute.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { BAD_TRUNCATED = 1, BAD_MORE_TREES = 2, BAD_ARITY = 3, BAD_LABEL = 4, NO_MEMORY = 5 };

/* Trees end to end; per-node and per-tree arrays (lists of tree t start at offsets[t]). */
typedef struct {
    int64_t n_trees, n_nodes;
    const int64_t *label, *arity, *offset;
    int64_t *first;  /* each node's first slot in kids */
    int64_t *kids;   /* children (global positions), node after node */
    int64_t *height; /* 0 at a leaf */
    int64_t *key;    /* SST/ST: production id (-1 at a leaf); PTK: label */
    int64_t *rank;   /* an internal node's position in its tree's group (same key), by pre-order */
    int64_t *sorted; /* per tree: the grouped nodes, by (key, pre-order) */
    int64_t *group_key, *group_start, *group_count, *group_unary, *n_groups; /* per tree: groups */
    int64_t *count_key, *count_value, *n_counts; /* SST: pre-terminal productions; PTK: leaves by label */
    int64_t *unary_key, *unary_value, *n_unary;  /* PTK: unary productions (label, word) */
    int64_t n_keys; /* production ids or labels are < n_keys */
} Forest;

static int compare_int64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

static int compare_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Sorts: insertion sort for the short arrays a tree or a pair mostly gives, qsort beyond. */
#define SHORT_SORT 48

static void sort_int64(int64_t *a, int64_t n)
{
    if (n > SHORT_SORT) {
        qsort(a, (size_t)n, sizeof(int64_t), compare_int64);
        return;
    }
    for (int64_t k = 1; k < n; k++) {
        int64_t x = a[k], j = k;
        for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

static void sort_double(double *a, int64_t n)
{
    if (n > SHORT_SORT) {
        qsort(a, (size_t)n, sizeof(double), compare_double);
        return;
    }
    for (int64_t k = 1; k < n; k++) {
        double x = a[k];
        int64_t j = k;
        for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
        a[j] = x;
    }
}

/* Each struct has its own free list (as work_free here, band_free in _ter.c): alike in shape, not in fields. */
static void forest_free(Forest *f)
{
    free(f->first);
    free(f->kids);
    free(f->height);
    free(f->key);
    free(f->rank);
    free(f->sorted);
    free(f->group_key);
    free(f->group_start);
    free(f->group_count);
    free(f->group_unary);
    free(f->n_groups);
    free(f->count_key);
    free(f->count_value);
    free(f->n_counts);
    free(f->unary_key);
    free(f->unary_value);
    free(f->n_unary);
}

/* Children and heights of every tree, from the child counts: right to left, a node's children are the
 * node after it and then, each, the node after the previous child's subtree. */
static int forest_structure(Forest *f)
{
    int64_t n = f->n_nodes, slots = 0;
    size_t size = sizeof(int64_t) * (size_t)(n + 1);
    int64_t *end = malloc(size);
    f->first = malloc(size);
    f->height = malloc(size);
    if (!end || !f->first || !f->height) {
        free(end);
        return NO_MEMORY;
    }
    for (int64_t u = 0; u < n; u++) {
        if (f->arity[u] < 0 || f->arity[u] > n) {
            free(end);
            return BAD_ARITY;
        }
        if (f->label[u] < 0) {
            free(end);
            return BAD_LABEL;
        }
        f->first[u] = slots;
        slots += f->arity[u];
    }
    f->kids = malloc(sizeof(int64_t) * (size_t)(slots + 1));
    if (!f->kids) {
        free(end);
        return NO_MEMORY;
    }
    for (int64_t t = 0; t < f->n_trees; t++) {
        int64_t start = f->offset[t], stop = f->offset[t + 1];
        for (int64_t u = stop - 1; u >= start; u--) {
            int64_t c = u + 1, h = -1;
            for (int64_t k = 0; k < f->arity[u]; k++) {
                if (c >= stop) {
                    free(end);
                    return BAD_TRUNCATED;
                }
                f->kids[f->first[u] + k] = c;
                if (f->height[c] > h) h = f->height[c];
                c = end[c];
            }
            end[u] = c;
            f->height[u] = h + 1;
        }
        if (stop > start && end[start] != stop) {
            free(end);
            return BAD_MORE_TREES;
        }
    }
    free(end);
    return 0;
}

static inline uint64_t mix(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static inline int64_t child_code(const Forest *f, int64_t c)
{
    return 2 * f->label[c] + (f->arity[c] == 0);
}

/* Production ids (SST/ST): nodes with equal labels and equal ordered child codes share an id, interned in
 * an open-addressing table of representative nodes. */
static int production_ids(Forest *f)
{
    int64_t n = f->n_nodes;
    f->key = malloc(sizeof(int64_t) * (size_t)(n + 1));
    size_t capacity = 16, internal = 0;
    for (int64_t u = 0; u < n; u++) internal += f->arity[u] > 0;
    while (capacity < 2 * internal) capacity <<= 1;
    int64_t *table = malloc(sizeof(int64_t) * capacity);
    uint64_t *hashes = malloc(sizeof(uint64_t) * capacity);
    if (!f->key || !table || !hashes) {
        free(table);
        free(hashes);
        return NO_MEMORY;
    }
    for (size_t s = 0; s < capacity; s++) table[s] = -1;
    int64_t next = 0;
    for (int64_t u = 0; u < n; u++) {
        int64_t arity = f->arity[u];
        if (!arity) {
            f->key[u] = -1;
            continue;
        }
        const int64_t *kids = f->kids + f->first[u];
        uint64_t h = mix(mix(0, (uint64_t)f->label[u]), (uint64_t)arity);
        for (int64_t k = 0; k < arity; k++) h = mix(h, (uint64_t)child_code(f, kids[k]));
        size_t s = (size_t)h & (capacity - 1);
        for (;; s = (s + 1) & (capacity - 1)) {
            int64_t other = table[s];
            if (other < 0) {
                table[s] = u;
                hashes[s] = h;
                f->key[u] = next++;
                break;
            }
            if (hashes[s] != h || f->label[other] != f->label[u] || f->arity[other] != arity) continue;
            const int64_t *others = f->kids + f->first[other];
            int64_t k = 0;
            while (k < arity && child_code(f, others[k]) == child_code(f, kids[k])) k++;
            if (k == arity) {
                f->key[u] = f->key[other];
                break;
            }
        }
    }
    free(table);
    free(hashes);
    f->n_keys = next;
    return 0;
}

/* Sorted keys[0:n] as (value, count) runs into values/counts; the number of runs. */
static int64_t runs(int64_t *keys, int64_t n, int64_t *values, int64_t *counts)
{
    sort_int64(keys, n);
    int64_t m = 0;
    for (int64_t k = 0; k < n; k++) {
        if (m && values[m - 1] == keys[k]) {
            counts[m - 1]++;
        } else {
            values[m] = keys[k];
            counts[m++] = 1;
        }
    }
    return m;
}

/* Per tree: the grouped nodes (grouped(u) true) sorted by (key, pre-order id), their groups and ranks;
 * `scratch` holds n_nodes int64. PTK also counts each group's unary nodes. */
static int group_nodes(Forest *f, int (*grouped)(const Forest *, int64_t), const char *unary, int64_t *scratch)
{
    int64_t n = f->n_nodes;
    size_t size = sizeof(int64_t) * (size_t)(n + 1);
    f->rank = malloc(size);
    f->sorted = malloc(size);
    f->group_key = malloc(size);
    f->group_start = malloc(size);
    f->group_count = malloc(size);
    f->group_unary = malloc(size);
    f->n_groups = malloc(sizeof(int64_t) * (size_t)(f->n_trees + 1));
    if (!f->rank || !f->sorted || !f->group_key || !f->group_start || !f->group_count || !f->group_unary
        || !f->n_groups)
        return NO_MEMORY;
    for (int64_t t = 0; t < f->n_trees; t++) {
        int64_t start = f->offset[t], n_tree = f->offset[t + 1] - start, m = 0;
        for (int64_t u = start; u < start + n_tree; u++)
            if (grouped(f, u)) scratch[m++] = f->key[u] * n_tree + (u - start);
        sort_int64(scratch, m);
        int64_t *sorted = f->sorted + start, g = -1;
        for (int64_t k = 0; k < m; k++) {
            int64_t u = start + scratch[k] % n_tree, key = f->key[u];
            sorted[k] = u;
            if (g < 0 || f->group_key[start + g] != key) {
                g++;
                f->group_key[start + g] = key;
                f->group_start[start + g] = k;
                f->group_count[start + g] = 0;
                f->group_unary[start + g] = 0;
            }
            f->rank[u] = f->group_count[start + g]++;
            if (unary && unary[u]) f->group_unary[start + g]++;
        }
        f->n_groups[t] = g + 1;
    }
    return 0;
}

static int is_phrasal(const Forest *f, int64_t u) { return f->height[u] > 1; }
static int is_internal(const Forest *f, int64_t u) { return f->arity[u] > 0; }

/* Per tree: runs of the keys of nodes selected by `pick` (key_of(u)), into the given arrays. */
static int count_runs(Forest *f, int (*pick)(const Forest *, int64_t), int64_t (*key_of)(const Forest *, int64_t),
                      int64_t **values, int64_t **counts, int64_t **n_runs, int64_t *scratch)
{
    size_t size = sizeof(int64_t) * (size_t)(f->n_nodes + 1);
    *values = malloc(size);
    *counts = malloc(size);
    *n_runs = malloc(sizeof(int64_t) * (size_t)(f->n_trees + 1));
    if (!*values || !*counts || !*n_runs) return NO_MEMORY;
    for (int64_t t = 0; t < f->n_trees; t++) {
        int64_t start = f->offset[t], m = 0;
        for (int64_t u = start; u < f->offset[t + 1]; u++)
            if (pick(f, u)) scratch[m++] = key_of(f, u);
        (*n_runs)[t] = runs(scratch, m, *values + start, *counts + start);
    }
    return 0;
}

static int is_preterminal(const Forest *f, int64_t u) { return f->height[u] == 1; }
static int is_leaf(const Forest *f, int64_t u) { return f->arity[u] == 0; }
static int is_unary(const Forest *f, int64_t u) { return f->arity[u] == 1 && f->arity[u + 1] == 0; }
static int64_t key_of_node(const Forest *f, int64_t u) { return f->key[u]; }
static int64_t label_of(const Forest *f, int64_t u) { return f->label[u]; }
static int64_t unary_production(const Forest *f, int64_t u) { return f->label[u] * f->n_keys + f->label[u + 1]; }

/* sum_k count_a(k) count_b(k) over the keys of two sorted (key, count) lists. */
static int64_t count_dot(const int64_t *key_a, const int64_t *count_a, int64_t n_a,
                         const int64_t *key_b, const int64_t *count_b, int64_t n_b)
{
    int64_t x = 0, y = 0, dot = 0;
    while (x < n_a && y < n_b) {
        if (key_a[x] < key_b[y]) {
            x++;
        } else if (key_a[x] > key_b[y]) {
            y++;
        } else {
            dot += count_a[x++] * count_b[y++];
        }
    }
    return dot;
}

/* Per-call scratch: for each key, its group in tree b and its block of the pair's Delta table (valid where
 * stamp == the pair's number), the table, and two rows of the PTK programme. */
typedef struct {
    int64_t *stamp_b, *start_b, *count_b, *stamp_ab, *base;
    double *delta;
    int64_t delta_size;
    double *prev, *cur;
} Work;

static int work_init(Work *w, int64_t n_keys, int64_t longest)
{
    size_t size = sizeof(int64_t) * (size_t)(n_keys + 1);
    w->stamp_b = malloc(size);
    w->start_b = malloc(size);
    w->count_b = malloc(size);
    w->stamp_ab = malloc(size);
    w->base = malloc(size);
    w->delta = NULL;
    w->delta_size = 0;
    w->prev = malloc(sizeof(double) * (size_t)(longest + 2));
    w->cur = malloc(sizeof(double) * (size_t)(longest + 2));
    if (!w->stamp_b || !w->start_b || !w->count_b || !w->stamp_ab || !w->base || !w->prev || !w->cur)
        return NO_MEMORY;
    for (int64_t k = 0; k <= n_keys; k++) w->stamp_b[k] = w->stamp_ab[k] = -1;
    return 0;
}

static void work_free(Work *w)
{
    free(w->stamp_b);
    free(w->start_b);
    free(w->count_b);
    free(w->stamp_ab);
    free(w->base);
    free(w->delta);
    free(w->prev);
    free(w->cur);
}

/* The blocks of the groups found in both trees; their cells, or -1 if over max_cells or out of memory. */
static int64_t pair_blocks(const Forest *f, Work *w, int64_t a, int64_t b, int64_t stamp, int64_t max_cells)
{
    int64_t sa = f->offset[a], sb = f->offset[b], cells = 0;
    for (int64_t g = 0; g < f->n_groups[b]; g++) {
        int64_t key = f->group_key[sb + g];
        w->stamp_b[key] = stamp;
        w->start_b[key] = f->group_start[sb + g];
        w->count_b[key] = f->group_count[sb + g];
    }
    for (int64_t g = 0; g < f->n_groups[a]; g++) {
        int64_t key = f->group_key[sa + g];
        if (w->stamp_b[key] != stamp) continue;
        w->stamp_ab[key] = stamp;
        w->base[key] = cells;
        cells += f->group_count[sa + g] * w->count_b[key];
        if (cells > max_cells) return -1;
    }
    if (cells > w->delta_size) {
        double *grown = realloc(w->delta, sizeof(double) * (size_t)cells);
        if (!grown) return -1;
        w->delta = grown;
        w->delta_size = cells;
    }
    return cells;
}

static inline int64_t cell_of(const Forest *f, const Work *w, int64_t key, int64_t u, int64_t v)
{
    return w->base[key] + f->rank[u] * w->count_b[key] + f->rank[v];
}

/* SST (sigma = 1) or ST (sigma = 0) of trees a and b; 0 when computed, -1 when left out. */
static int subset_tree_pair(const Forest *f, Work *w, int64_t a, int64_t b, int64_t stamp, double lam,
                            double sigma, int64_t max_cells, double *out)
{
    int64_t sa = f->offset[a], sb = f->offset[b];
    if (f->offset[a + 1] == sa || f->offset[b + 1] == sb) {
        *out = 0.0;
        return 0;
    }
    int64_t matches = count_dot(f->count_key + sa, f->count_value + sa, f->n_counts[a], f->count_key + sb,
                                f->count_value + sb, f->n_counts[b]);
    int64_t cells = pair_blocks(f, w, a, b, stamp, max_cells);
    if (cells < 0) return -1;
    double *delta = w->delta, pre_value = sigma + lam;
    for (int64_t u = f->offset[a + 1] - 1; u >= sa; u--) {
        int64_t p = f->key[u];
        if (f->height[u] < 2 || w->stamp_ab[p] != stamp) continue;
        const int64_t *kids_u = f->kids + f->first[u], arity = f->arity[u];
        const int64_t *group = f->sorted + sb + w->start_b[p];
        double *row = delta + w->base[p] + f->rank[u] * w->count_b[p];
        for (int64_t k = 0; k < w->count_b[p]; k++) {
            const int64_t *kids_v = f->kids + f->first[group[k]];
            double product = 0.0;
            for (int64_t x = 0; x < arity; x++) {
                int64_t cu = kids_u[x], cv = kids_v[x], pu = f->key[cu];
                double factor;
                if (pu < 0)
                    factor = 1.0; /* a leaf: part of the production */
                else if (pu != f->key[cv])
                    factor = sigma;
                else if (f->height[cu] == 1)
                    factor = pre_value;
                else
                    factor = sigma + delta[cell_of(f, w, pu, cu, cv)];
                product = x ? product * factor : factor;
            }
            row[k] = lam * product;
        }
    }
    sort_double(delta, cells);
    double sum = 0.0;
    for (int64_t k = 0; k < cells; k++) sum += delta[k];
    *out = lam * (double)matches + sum;
    return 0;
}

typedef struct {
    double lam, lam2, leaf_value, unary_same;
} PtkOptions;

/* Delta of a child pair (cu, cv), as kernels.py's child_delta. */
static inline double child_delta(const Forest *f, const Work *w, const PtkOptions *o, int64_t cu, int64_t cv)
{
    int64_t label = f->label[cu];
    if (label != f->label[cv]) return 0.0;
    if (!f->arity[cu] || !f->arity[cv]) return o->leaf_value;
    int unary_u = is_unary(f, cu), unary_v = is_unary(f, cv);
    if (unary_u && unary_v) return f->label[cu + 1] == f->label[cv + 1] ? o->unary_same : o->leaf_value;
    return w->delta[cell_of(f, w, label, cu, cv)];
}

/* sum_p Delta_p over the children of u and v (Moschitti 2006b), as _partial_tree_pair's programme. */
static double children_sum(const Forest *f, Work *w, const PtkOptions *o, int64_t u, int64_t v)
{
    const int64_t *ca = f->kids + f->first[u], *cb = f->kids + f->first[v];
    int64_t n = f->arity[u], m = f->arity[v];
    double s = 0.0;
    if (n == 1 || m == 1) {
        for (int64_t x = 0; x < n; x++)
            for (int64_t y = 0; y < m; y++) s += child_delta(f, w, o, ca[x], cb[y]);
        return s;
    }
    double *prev = w->prev, *cur = w->cur, lam = o->lam, lam2 = o->lam2;
    for (int64_t y = 0; y <= m; y++) prev[y] = 0.0;
    cur[0] = 0.0;
    for (int64_t x = 0; x < n; x++) {
        double left = 0.0;
        for (int64_t y = 1; y <= m; y++) {
            double d = child_delta(f, w, o, ca[x], cb[y - 1]);
            double t = d != 0.0 ? d * (1.0 + prev[y - 1]) : 0.0;
            s += t;
            left = t + lam * (prev[y] + left) - lam2 * prev[y - 1];
            cur[y] = left;
        }
        double *swap = prev;
        prev = cur;
        cur = swap;
    }
    return s;
}

/* PTK of trees a and b; 0 when computed, -1 when left out. */
static int partial_tree_pair(const Forest *f, Work *w, int64_t a, int64_t b, int64_t stamp, const PtkOptions *o,
                             double mu, int64_t max_cells, double *out)
{
    int64_t sa = f->offset[a], sb = f->offset[b];
    if (f->offset[a + 1] == sa || f->offset[b + 1] == sb) {
        *out = 0.0;
        return 0;
    }
    /* closed forms: pairs with a leaf (leaf x leaf once), unary x unary (same word or not) */
    const int64_t *leaf_a = f->count_key + sa, *leaf_b = f->count_key + sb;
    const int64_t *leaf_na = f->count_value + sa, *leaf_nb = f->count_value + sb;
    const int64_t *group_a = f->group_key + sa, *group_b = f->group_key + sb;
    int64_t leafy = count_dot(leaf_a, leaf_na, f->n_counts[a], leaf_b, leaf_nb, f->n_counts[b])
                    + count_dot(leaf_a, leaf_na, f->n_counts[a], group_b, f->group_count + sb, f->n_groups[b])
                    + count_dot(leaf_b, leaf_nb, f->n_counts[b], group_a, f->group_count + sa, f->n_groups[a]);
    int64_t unary_pairs = count_dot(group_a, f->group_unary + sa, f->n_groups[a], group_b, f->group_unary + sb,
                                    f->n_groups[b]);
    int64_t same_word = count_dot(f->unary_key + sa, f->unary_value + sa, f->n_unary[a], f->unary_key + sb,
                                  f->unary_value + sb, f->n_unary[b]);
    double closed = o->leaf_value * (double)(leafy + unary_pairs)
                    + (o->unary_same - o->leaf_value) * (double)same_word;
    if (pair_blocks(f, w, a, b, stamp, max_cells) < 0) return -1;
    double total = 0.0 + closed;
    for (int64_t u = f->offset[a + 1] - 1; u >= sa; u--) {
        int64_t label = f->label[u];
        if (!f->arity[u] || w->stamp_ab[label] != stamp) continue;
        int unary_u = is_unary(f, u);
        const int64_t *group = f->sorted + sb + w->start_b[label];
        double *row = w->delta + w->base[label] + f->rank[u] * w->count_b[label];
        for (int64_t k = w->count_b[label] - 1; k >= 0; k--) { /* decreasing pre-order ids */
            int64_t v = group[k];
            if (unary_u && is_unary(f, v)) continue; /* a closed form */
            double value = mu * (o->lam2 + children_sum(f, w, o, u, v));
            row[k] = value;
            total += value;
        }
    }
    *out = total;
    return 0;
}

static int contiguous(Py_buffer *view, const char *name)
{
    if (view->itemsize != 8 || view->len % 8) {
        PyErr_Format(PyExc_TypeError, "%s must be a contiguous buffer of 8-byte items", name);
        return 0;
    }
    return 1;
}

/* Both entry points: parse, check, build the forest, run the pairs with the GIL released. */
static PyObject *run(PyObject *args, int ptk)
{
    Py_buffer lv, av, ov, lefv, rigv, outv;
    double lam, option;
    long long max_cells;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*ddLw*", &lv, &av, &ov, &lefv, &rigv, &lam, &option, &max_cells, &outv))
        return NULL;
    PyObject *result = NULL;
    Forest f;
    memset(&f, 0, sizeof f);
    Work w;
    memset(&w, 0, sizeof w);
    int64_t *scratch = NULL;
    if (!contiguous(&lv, "labels") || !contiguous(&av, "arities") || !contiguous(&ov, "offsets")
        || !contiguous(&lefv, "left") || !contiguous(&rigv, "right") || !contiguous(&outv, "out"))
        goto done;
    f.n_nodes = lv.len / 8;
    f.n_trees = ov.len / 8 - 1;
    f.label = lv.buf;
    f.arity = av.buf;
    f.offset = ov.buf;
    Py_ssize_t n_pairs = outv.len / 8;
    const int64_t *left = lefv.buf, *right = rigv.buf;
    double *out = outv.buf;
    if (av.len != lv.len || f.n_trees < 0 || lefv.len / 8 != n_pairs || rigv.len / 8 != n_pairs) {
        PyErr_SetString(PyExc_ValueError, "labels and arities, left, right and out must agree in length");
        goto done;
    }
    if (f.n_trees >= 0 && (f.offset[0] != 0 || f.offset[f.n_trees] != f.n_nodes)) {
        PyErr_SetString(PyExc_ValueError, "offsets must run from 0 to the number of nodes");
        goto done;
    }
    for (int64_t t = 0; t < f.n_trees; t++) {
        if (f.offset[t + 1] < f.offset[t]) {
            PyErr_SetString(PyExc_ValueError, "offsets must not decrease");
            goto done;
        }
    }
    for (Py_ssize_t p = 0; p < n_pairs; p++) {
        if (left[p] < 0 || left[p] >= f.n_trees || right[p] < 0 || right[p] >= f.n_trees) {
            PyErr_SetString(PyExc_ValueError, "a pair names a tree out of range");
            goto done;
        }
    }
    char *skipped = calloc((size_t)n_pairs + 1, 1);
    int error = skipped ? 0 : NO_MEMORY;
    Py_BEGIN_ALLOW_THREADS
    scratch = malloc(sizeof(int64_t) * (size_t)(f.n_nodes + 1));
    char *unary = NULL;
    if (!error && !scratch) error = NO_MEMORY;
    if (!error) error = forest_structure(&f);
    int64_t longest = 1;
    for (int64_t u = 0; !error && u < f.n_nodes; u++)
        if (f.arity[u] > longest) longest = f.arity[u];
    if (!error && !ptk) {
        error = production_ids(&f);
        if (!error) error = group_nodes(&f, is_phrasal, NULL, scratch);
        if (!error)
            error = count_runs(&f, is_preterminal, key_of_node, &f.count_key, &f.count_value, &f.n_counts, scratch);
    } else if (!error) {
        int64_t n_labels = 1;
        for (int64_t u = 0; u < f.n_nodes; u++)
            if (f.label[u] + 1 > n_labels) n_labels = f.label[u] + 1;
        f.n_keys = n_labels;
        f.key = malloc(sizeof(int64_t) * (size_t)(f.n_nodes + 1));
        unary = malloc((size_t)f.n_nodes + 1);
        if (!f.key || !unary) error = NO_MEMORY;
        for (int64_t u = 0; !error && u < f.n_nodes; u++) {
            f.key[u] = f.label[u];
            unary[u] = (char)is_unary(&f, u);
        }
        if (!error) error = group_nodes(&f, is_internal, unary, scratch);
        if (!error) error = count_runs(&f, is_leaf, label_of, &f.count_key, &f.count_value, &f.n_counts, scratch);
        if (!error)
            error = count_runs(&f, is_unary, unary_production, &f.unary_key, &f.unary_value, &f.n_unary, scratch);
    }
    free(unary);
    if (!error) error = work_init(&w, f.n_keys, longest);
    if (!error) {
        PtkOptions o;
        o.lam = lam;
        o.lam2 = lam * lam;
        o.leaf_value = option * o.lam2;
        o.unary_same = o.leaf_value * (1.0 + option);
        for (Py_ssize_t p = 0; p < n_pairs; p++) {
            int done_ = ptk ? partial_tree_pair(&f, &w, left[p], right[p], p, &o, option, max_cells, out + p)
                            : subset_tree_pair(&f, &w, left[p], right[p], p, lam, option, max_cells, out + p);
            skipped[p] = done_ < 0;
        }
    }
    Py_END_ALLOW_THREADS
    if (error == NO_MEMORY) {
        PyErr_NoMemory();
    } else if (error == BAD_TRUNCATED) {
        PyErr_SetString(PyExc_ValueError, "the pre-order sequence ends before every node has its children");
    } else if (error == BAD_MORE_TREES) {
        PyErr_SetString(PyExc_ValueError, "the pre-order sequence holds more than one tree");
    } else if (error == BAD_ARITY) {
        PyErr_SetString(PyExc_ValueError, "a node has a negative number of children or more than there are nodes");
    } else if (error == BAD_LABEL) {
        PyErr_SetString(PyExc_ValueError, "label ids must not be negative");
    } else {
        result = PyList_New(0);
        for (Py_ssize_t p = 0; result && p < n_pairs; p++) {
            if (!skipped[p]) continue;
            PyObject *index = PyLong_FromSsize_t(p);
            if (!index || PyList_Append(result, index) < 0) Py_CLEAR(result);
            Py_XDECREF(index);
        }
    }
    free(skipped);
done:
    free(scratch);
    forest_free(&f);
    work_free(&w);
    PyBuffer_Release(&lv);
    PyBuffer_Release(&av);
    PyBuffer_Release(&ov);
    PyBuffer_Release(&lefv);
    PyBuffer_Release(&rigv);
    PyBuffer_Release(&outv);
    return result;
}

static PyObject *subset_tree(PyObject *self, PyObject *args) { return run(args, 0); }
static PyObject *partial_tree(PyObject *self, PyObject *args) { return run(args, 1); }

static PyMethodDef methods[] = {
    {"subset_tree", subset_tree, METH_VARARGS,
     "subset_tree(labels, arities, offsets, left, right, lam, sigma, max_cells, out): unnormalised SST "
     "(sigma 1) or ST (sigma 0) of each pair of trees into out; returns the pairs left out (over max_cells)."},
    {"partial_tree", partial_tree, METH_VARARGS,
     "partial_tree(labels, arities, offsets, left, right, lam, mu, max_cells, out): unnormalised PTK of each "
     "pair of trees into out; returns the pairs left out (over max_cells)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels", "Tree kernels (SST, ST, PTK) in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kernels(void)
{
    return PyModule_Create(&module);
}
