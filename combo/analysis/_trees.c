/* The pre-order labels and child counts of the trees combo/analysis/trees.py builds from analyses, in C:
 * for regular input, exactly what from_dependencies and from_chunks give (the same label objects, in the
 * same order; a chunk's label is a new string equal to the one str.partition makes).
 *
 * dependency_preorder(words, heads, relations, pos): pos may be None. Token t's node is labelled by its
 * relation; its children are, left to right, the nodes of its dependents before it, then (POS word) (or
 * the word alone without POS), then its dependents after it. Several roots are joined under "ROOT".
 * chunk_preorder(words, pos, chunks, root): the tree root -> chunk -> POS -> word of BIO chunk tags; B-X
 * opens a chunk X, I-X continues an open chunk X (and opens one when none of type X is open), O hangs
 * (POS word) under the root.
 *
 * Both return (labels, arities) as tuples, or None for anything irregular: no tokens, sequences of
 * different lengths, a head that is not an int or out of range, heads on a cycle, a chunk tag that is not
 * B-X, I-X or O, a label that is not a non-empty str. The Python code then raises the error that names it.
 * They hold the GIL (they build Python objects).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

static PyObject *ROOT_LABEL;

/* Whether x is a label trees.py accepts: a non-empty str. */
static int is_label(PyObject *x)
{
    return PyUnicode_Check(x) && PyUnicode_GET_LENGTH(x) > 0;
}

/* The tuples (labels, arities) of n nodes; labels are borrowed references (the tuple takes its own). */
static PyObject *as_tuples(PyObject **labels, const Py_ssize_t *arities, Py_ssize_t n)
{
    PyObject *label_tuple = PyTuple_New(n), *arity_tuple = PyTuple_New(n), *out = NULL;
    if (label_tuple == NULL || arity_tuple == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arity = PyLong_FromSsize_t(arities[i]);
        if (arity == NULL)
            goto done;
        Py_INCREF(labels[i]);
        PyTuple_SET_ITEM(label_tuple, i, labels[i]);
        PyTuple_SET_ITEM(arity_tuple, i, arity);
    }
    out = PyTuple_Pack(2, label_tuple, arity_tuple);
done:
    Py_XDECREF(label_tuple);
    Py_XDECREF(arity_tuple);
    return out;
}

/* What a builder returns: out, or None (any error cleared) for irregular input. */
static PyObject *result(PyObject *out, int irregular)
{
    if (irregular) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return out;
}

/* The sequences' items (PySequence_Fast), all of length n, or NULL with *fast set to NULL for a mismatch. */
static PyObject **items_of(PyObject *seq, Py_ssize_t n, PyObject **fast)
{
    *fast = PySequence_Fast(seq, "a sequence is needed");
    if (*fast == NULL)
        return NULL;
    if (PySequence_Fast_GET_SIZE(*fast) != n) {
        Py_CLEAR(*fast);
        return NULL;
    }
    return PySequence_Fast_ITEMS(*fast);
}

static PyObject *dependency_preorder(PyObject *self, PyObject *args)
{
    PyObject *words_in, *heads_in, *relations_in, *pos_in;
    if (!PyArg_ParseTuple(args, "OOOO", &words_in, &heads_in, &relations_in, &pos_in))
        return NULL;
    PyObject *fw = NULL, *fh = NULL, *fr = NULL, *fp = NULL, *out = NULL;
    Py_ssize_t *head = NULL, *first = NULL, *deps = NULL, *fill = NULL, *stack = NULL, *arities = NULL;
    PyObject **labels = NULL;
    int irregular = 1;

    Py_ssize_t n = PySequence_Size(words_in);
    if (n <= 0)
        return result(NULL, 1);
    PyObject **words = items_of(words_in, n, &fw), **heads = items_of(heads_in, n, &fh);
    PyObject **relations = items_of(relations_in, n, &fr), **pos = NULL;
    if (pos_in != Py_None)
        pos = items_of(pos_in, n, &fp);
    if (words == NULL || heads == NULL || relations == NULL || (pos_in != Py_None && pos == NULL))
        goto done;
    Py_ssize_t n_labels = n * (pos != NULL ? 3 : 2) + 1;
    head = malloc(sizeof(Py_ssize_t) * (n + 1));
    first = calloc(n + 2, sizeof(Py_ssize_t));
    deps = malloc(sizeof(Py_ssize_t) * (n + 1));
    fill = malloc(sizeof(Py_ssize_t) * (n + 1));
    stack = malloc(sizeof(Py_ssize_t) * (2 * n + 2));
    arities = malloc(sizeof(Py_ssize_t) * n_labels);
    labels = malloc(sizeof(PyObject *) * n_labels);
    if (!head || !first || !deps || !fill || !stack || !arities || !labels) {
        PyErr_NoMemory();
        irregular = 0;
        goto done;
    }
    for (Py_ssize_t t = 1; t <= n; t++) {
        PyObject *h = heads[t - 1];
        if (!PyLong_Check(h))
            goto done;
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(h, &overflow);
        if (overflow || value < 0 || value > n || value == t)
            goto done;
        head[t] = (Py_ssize_t)value;
        first[value + 1]++;
    }
    /* the dependents of each head h (0: the roots), in increasing token order: deps[first[h]:first[h+1]] */
    for (Py_ssize_t h = 0; h <= n; h++)
        first[h + 1] += first[h];
    for (Py_ssize_t h = 0; h <= n; h++)
        fill[h] = first[h];
    for (Py_ssize_t t = 1; t <= n; t++)
        deps[fill[head[t]]++] = t;
    Py_ssize_t n_roots = first[1], top = 0, count = 0, visited = 0;
    if (n_roots == 0)
        goto done;
    if (n_roots > 1) {
        labels[count] = ROOT_LABEL;
        arities[count++] = n_roots;
    }
    for (Py_ssize_t k = n_roots - 1; k >= 0; k--)
        stack[top++] = deps[k];
    while (top > 0) {
        Py_ssize_t t = stack[--top];
        if (t < 0) {  /* the token's own (POS word) */
            if (pos != NULL) {
                labels[count] = pos[-t - 1];
                arities[count++] = 1;
            }
            labels[count] = words[-t - 1];
            arities[count++] = 0;
            continue;
        }
        visited++;
        Py_ssize_t lo = first[t], hi = first[t + 1], mid = lo;
        while (mid < hi && deps[mid] < t)
            mid++;
        labels[count] = relations[t - 1];
        arities[count++] = hi - lo + 1;
        for (Py_ssize_t k = hi - 1; k >= mid; k--)
            stack[top++] = deps[k];
        stack[top++] = -t;
        for (Py_ssize_t k = mid - 1; k >= lo; k--)
            stack[top++] = deps[k];
    }
    if (visited != n)  /* tokens on a head cycle are never reached from a root */
        goto done;
    for (Py_ssize_t i = 0; i < count; i++)
        if (!is_label(labels[i]))
            goto done;
    irregular = 0;
    out = as_tuples(labels, arities, count);
done:
    free(head);
    free(first);
    free(deps);
    free(fill);
    free(stack);
    free(arities);
    free(labels);
    Py_XDECREF(fw);
    Py_XDECREF(fh);
    Py_XDECREF(fr);
    Py_XDECREF(fp);
    return result(out, irregular);
}

static PyObject *chunk_preorder(PyObject *self, PyObject *args)
{
    PyObject *words_in, *pos_in, *chunks_in, *root;
    if (!PyArg_ParseTuple(args, "OOOO", &words_in, &pos_in, &chunks_in, &root))
        return NULL;
    PyObject *fw = NULL, *fp = NULL, *fc = NULL, *out = NULL, *kinds = NULL;
    Py_ssize_t *arities = NULL;
    PyObject **labels = NULL;
    int irregular = 1;

    Py_ssize_t n = PySequence_Size(words_in);
    if (n <= 0 || !is_label(root))
        return result(NULL, 1);
    PyObject **words = items_of(words_in, n, &fw), **pos = items_of(pos_in, n, &fp);
    PyObject **chunks = items_of(chunks_in, n, &fc);
    if (words == NULL || pos == NULL || chunks == NULL)
        goto done;
    kinds = PyList_New(0);  /* owns the chunk labels made here */
    arities = malloc(sizeof(Py_ssize_t) * (3 * n + 1));
    labels = malloc(sizeof(PyObject *) * (3 * n + 1));
    if (kinds == NULL || arities == NULL || labels == NULL) {
        if (kinds != NULL)
            PyErr_NoMemory();
        irregular = 0;
        goto done;
    }
    Py_ssize_t count = 1, chunk_node = -1;
    PyObject *current = NULL;  /* the open chunk's type (owned by kinds), NULL when none is open */
    labels[0] = root;
    arities[0] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *chunk = chunks[i];
        if (!PyUnicode_Check(chunk))
            goto done;
        Py_ssize_t length = PyUnicode_GET_LENGTH(chunk);
        if (length == 1 && PyUnicode_READ_CHAR(chunk, 0) == 'O') {
            current = NULL;
            arities[0]++;
        } else {
            /* str.partition("-"): the prefix must be B or I and the type not empty */
            Py_UCS4 prefix = length >= 3 ? PyUnicode_READ_CHAR(chunk, 0) : 0;
            if ((prefix != 'B' && prefix != 'I') || PyUnicode_READ_CHAR(chunk, 1) != '-')
                goto done;
            PyObject *kind = PyUnicode_Substring(chunk, 2, length);
            if (kind == NULL) {
                irregular = 0;
                goto done;
            }
            int same = current != NULL ? PyUnicode_Compare(kind, current) : 1;
            if (same == -1 && PyErr_Occurred()) {
                Py_DECREF(kind);
                irregular = 0;
                goto done;
            }
            if (prefix == 'B' || current == NULL || same != 0) {
                if (PyList_Append(kinds, kind) < 0) {
                    Py_DECREF(kind);
                    irregular = 0;
                    goto done;
                }
                current = kind;
                arities[0]++;
                chunk_node = count;
                labels[count] = kind;
                arities[count++] = 0;
            }
            Py_DECREF(kind);
            arities[chunk_node]++;
        }
        if (!is_label(pos[i]) || !is_label(words[i]))
            goto done;
        labels[count] = pos[i];
        arities[count++] = 1;
        labels[count] = words[i];
        arities[count++] = 0;
    }
    /* Ends as dependency_preorder does (C's goto cleanup): each builder frees its own buffers and references. */
    irregular = 0;
    out = as_tuples(labels, arities, count);
done:
    free(arities);
    free(labels);
    Py_XDECREF(kinds);
    Py_XDECREF(fw);
    Py_XDECREF(fp);
    Py_XDECREF(fc);
    return result(out, irregular);
}

static PyMethodDef methods[] = {
    {"dependency_preorder", dependency_preorder, METH_VARARGS,
     "dependency_preorder(words, heads, relations, pos): (labels, arities) of from_dependencies' tree, or None "
     "for irregular input."},
    {"chunk_preorder", chunk_preorder, METH_VARARGS,
     "chunk_preorder(words, pos, chunks, root): (labels, arities) of from_chunks' tree, or None for irregular "
     "input."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trees",
                                    "Pre-order labels and child counts of dependency and chunk trees in C.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__trees(void)
{
    ROOT_LABEL = PyUnicode_InternFromString("ROOT");
    if (ROOT_LABEL == NULL)
        return NULL;
    return PyModule_Create(&module);
}
