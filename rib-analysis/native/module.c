/* CPython glue for rib_table + mrt_decode: the decoder runs without the GIL, so a Python thread
 * can decompress the next chunk while this one is decoded. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <unistd.h>

#include "decompress.h"
#include "mrt_decode.h"
#include "rib_table.h"

typedef struct {
    PyObject_HEAD
    rib_t *rib;
    int busy;
    int finished;
} RibObject;

static void Rib_dealloc(RibObject *self) {
    rib_free(self->rib);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Rib_init(RibObject *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "", kwlist)) return -1;
    rib_free(self->rib);
    self->rib = rib_new();
    if (!self->rib) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *stats_dict(const mrt_stats *st) {
    PyObject *bad = Py_None;
    Py_INCREF(Py_None);
    if (st->bad_reason[0]) {
        Py_DECREF(Py_None);
        bad = Py_BuildValue("(Ks)", (unsigned long long)st->bad_offset, st->bad_reason);
        if (!bad) return NULL;
    }
    PyObject *tail = Py_None;
    Py_INCREF(Py_None);
    if (st->partial_tail) {
        Py_DECREF(Py_None);
        tail = Py_BuildValue("(KK)", (unsigned long long)st->tail_offset,
                             (unsigned long long)st->tail_bytes);
        if (!tail) {
            Py_DECREF(bad);
            return NULL;
        }
    }
    return Py_BuildValue(
        "{sK sK sK sK sK sK sK sK sK sK sK sK sO sN sN si}", "bytes",
        (unsigned long long)st->bytes, "records", (unsigned long long)st->records, "rib_records",
        (unsigned long long)st->rib_records, "entries", (unsigned long long)st->entries,
        "entries_no_path", (unsigned long long)st->entries_no_path, "peer_tables",
        (unsigned long long)st->peer_tables, "peers", (unsigned long long)st->peers,
        "skipped_other", (unsigned long long)st->skipped_other, "skipped_afi",
        (unsigned long long)st->skipped_afi, "bad_records", (unsigned long long)st->bad_records,
        "resyncs", (unsigned long long)st->resyncs, "resync_bytes",
        (unsigned long long)st->resync_bytes, "stopped", st->stopped ? Py_True : Py_False,
        "first_bad", bad, "partial_tail", tail, "io_errno", st->io_errno);
}

static int claim(RibObject *self) {
    if (!self->rib) {
        PyErr_SetString(PyExc_RuntimeError, "Rib is not initialised");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Rib is in use by another thread");
        return -1;
    }
    self->busy = 1;
    return 0;
}

/* Called without the GIL from the decoding thread: take it just long enough to run Python's
 * signal handlers, so Ctrl-C stops a long decode within a few MB. */
static int check_signals(void) {
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = PyErr_CheckSignals();
    PyGILState_Release(g);
    return rc != 0;
}

static PyObject *finish_feed(RibObject *self, const mrt_stats *st) {
    self->busy = 0;
    self->finished = 0;
    if (st->interrupted) return NULL; /* the signal handler's exception is set */
    if (st->out_of_memory) return PyErr_NoMemory();
    return stats_dict(st);
}

static PyObject *Rib_feed_fd(RibObject *self, PyObject *args) {
    int fd, skip_bad;
    if (!PyArg_ParseTuple(args, "ip", &fd, &skip_bad)) return NULL;
    if (claim(self)) return NULL;
    mrt_stats st;
    Py_BEGIN_ALLOW_THREADS
    mrt_decode_fd(self->rib, fd, skip_bad, &st, check_signals);
    Py_END_ALLOW_THREADS
    return finish_feed(self, &st);
}

static PyObject *Rib_feed_file(RibObject *self, PyObject *args) {
    int fd, kind, skip_bad;
    if (!PyArg_ParseTuple(args, "iip", &fd, &kind, &skip_bad)) return NULL;
    if (kind < COMPRESSION_NONE || kind > COMPRESSION_BZIP2) {
        PyErr_Format(PyExc_ValueError, "unknown compression kind %d", kind);
        return NULL;
    }
    if (claim(self)) return NULL;
    mrt_stats st;
    decompressor z;
    memset(&z, 0, sizeof z);
    int rc = 0, saved = 0;
    Py_BEGIN_ALLOW_THREADS
    if (kind == COMPRESSION_NONE) {
        mrt_decode_fd(self->rib, fd, skip_bad, &st, check_signals);
    } else {
        int rfd;
        rc = decompress_start(&z, fd, kind, &rfd);
        saved = errno;
        if (!rc) {
            mrt_decode_fd(self->rib, rfd, skip_bad, &st, check_signals);
            close(rfd); /* a decoder that stopped early unblocks the writer (EPIPE) */
            decompress_join(&z);
        }
    }
    Py_END_ALLOW_THREADS
    if (rc) {
        self->busy = 0;
        errno = saved;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    PyObject *d = finish_feed(self, &st);
    if (!d) return NULL;
    PyObject *zd = Py_BuildValue("{sKsOsOsKss}", "compressed_read",
                                 (unsigned long long)z.compressed_read, "truncated",
                                 z.truncated ? Py_True : Py_False, "failed",
                                 z.failed ? Py_True : Py_False, "fail_offset",
                                 (unsigned long long)z.fail_offset, "error", z.error);
    if (!zd || PyDict_SetItemString(d, "decompression", zd)) {
        Py_XDECREF(zd);
        Py_DECREF(d);
        return NULL;
    }
    Py_DECREF(zd);
    return d;
}

static PyObject *Rib_feed_bytes(RibObject *self, PyObject *args) {
    Py_buffer view;
    int skip_bad;
    if (!PyArg_ParseTuple(args, "y*p", &view, &skip_bad)) return NULL;
    if (claim(self)) {
        PyBuffer_Release(&view);
        return NULL;
    }
    mrt_stats st;
    Py_BEGIN_ALLOW_THREADS
    mrt_decode_buf(self->rib, view.buf, (uint64_t)view.len, skip_bad, &st);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return finish_feed(self, &st);
}

static PyObject *Rib_finish(RibObject *self, PyObject *args) {
    int first_hop_is_transit;
    if (!PyArg_ParseTuple(args, "p", &first_hop_is_transit)) return NULL;
    if (claim(self)) return NULL;
    grt_counts grt;
    as_summary sum;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = rib_finish(self->rib, first_hop_is_transit, &grt, &sum);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    if (rc) return PyErr_NoMemory();
    self->finished = 1;

    size_t nh = (size_t)sum.max_degree + 1;
    uint64_t *hist = PyMem_Calloc(nh, sizeof *hist);
    if (!hist) return PyErr_NoMemory();
    rib_homing(self->rib, hist, nh);
    PyObject *homing = PyDict_New();
    for (size_t d = 0; homing && d < nh; d++) {
        if (!hist[d]) continue;
        PyObject *k = PyLong_FromSize_t(d), *v = PyLong_FromUnsignedLongLong(hist[d]);
        if (!k || !v || PyDict_SetItem(homing, k, v)) Py_CLEAR(homing);
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    PyMem_Free(hist);
    if (!homing) return NULL;

    size_t n = rib_as_count(self->rib);
    const as_row *rows = rib_as_rows(self->rib);
    PyObject *loads = PyList_New(0);
    for (size_t i = 0; loads && i < n; i++) {
        const as_row *r = &rows[i];
        if (!r->provider || !(r->single + r->multi)) continue;
        PyObject *t = Py_BuildValue("(kIIK)", (unsigned long)r->asn, r->single, r->multi,
                                    (unsigned long long)r->degree_sum);
        if (!t || PyList_Append(loads, t)) Py_CLEAR(loads);
        Py_XDECREF(t);
    }
    if (!loads) {
        Py_DECREF(homing);
        return NULL;
    }
#define U(x) (unsigned long long)(x)
    return Py_BuildValue(
        "{s{sKsKsKsKsKsKsK} s{sKsKsKsK} s(KKK) s(KKK) sK sN sN}", "grt", "v4", U(grt.v4), "v6",
        U(grt.v6), "mast_v4", U(grt.mast_v4), "mast_v6", U(grt.mast_v6), "agg_v4",
        U(grt.agg_v4), "agg_v6", U(grt.agg_v6), "no_origin", U(grt.no_origin), "ases", "total", U(sum.ases), "stubs", U(sum.stubs), "providers",
        U(sum.providers), "first_hop_only", U(sum.first_hop_only), "single", U(sum.single[0]),
        U(sum.single[1]), U(sum.single[2]), "multi", U(sum.multi[0]), U(sum.multi[1]),
        U(sum.multi[2]), "no_upstream", U(sum.no_upstream), "homing", homing, "loads", loads);
#undef U
}

static PyObject *Rib_as_rows(RibObject *self, PyObject *Py_UNUSED(ignored)) {
    if (!self->finished) {
        PyErr_SetString(PyExc_RuntimeError, "call finish() first");
        return NULL;
    }
    size_t n = rib_as_count(self->rib);
    const as_row *rows = rib_as_rows(self->rib);
    const uint32_t *ups = rib_upstreams(self->rib);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list) return NULL;
    for (size_t i = 0; i < n; i++) {
        const as_row *r = &rows[i];
        PyObject *u = PyTuple_New(r->up_cnt);
        if (!u) goto fail;
        for (uint32_t k = 0; k < r->up_cnt; k++) {
            PyObject *a = PyLong_FromUnsignedLong(ups[r->up_off + k]);
            if (!a) {
                Py_DECREF(u);
                goto fail;
            }
            PyTuple_SET_ITEM(u, k, a);
        }
        PyObject *b4 = r->block_v4 > 128 ? Py_None : PyLong_FromLong(r->block_v4);
        PyObject *b6 = r->block_v6 > 128 ? Py_None : PyLong_FromLong(r->block_v6);
        if (b4 == Py_None) Py_INCREF(Py_None);
        if (b6 == Py_None) Py_INCREF(Py_None);
        if (!b4 || !b6) {
            Py_XDECREF(b4);
            Py_XDECREF(b6);
            Py_DECREF(u);
            goto fail;
        }
        PyObject *t = Py_BuildValue("(kiiIINNN)", (unsigned long)r->asn, (int)r->flags,
                                    (int)r->provider, r->n_pi, r->n_pa, u, b4, b6);
        if (!t) goto fail;
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

static PyMethodDef Rib_methods[] = {
    {"feed_fd", (PyCFunction)Rib_feed_fd, METH_VARARGS,
     "feed_fd(fd, skip_bad) -> dict: decode an MRT stream from fd to EOF"},
    {"feed_file", (PyCFunction)Rib_feed_file, METH_VARARGS,
     "feed_file(fd, compression, skip_bad) -> dict: decompress (0 none, 1 gzip, 2 bzip2) in a "
     "second thread and decode"},
    {"feed_bytes", (PyCFunction)Rib_feed_bytes, METH_VARARGS,
     "feed_bytes(data, skip_bad) -> dict: decode an in-memory MRT stream"},
    {"finish", (PyCFunction)Rib_finish, METH_VARARGS,
     "finish(first_hop_is_transit) -> dict: classification summary (grt, ases, stubs table, "
     "homing histogram, per-provider loads)"},
    {"as_rows", (PyCFunction)Rib_as_rows, METH_NOARGS,
     "as_rows() -> [(asn, flags, provider, n_pi, n_pa, upstreams, block_v4, block_v6)] after "
     "finish(); block_* = shortest prefix length originated per family, or None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RibType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "rib_analysis._mrt.Rib",
    .tp_basicsize = sizeof(RibObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Aggregated RIB: ASN flags, upstreams, prefix origins.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Rib_init,
    .tp_dealloc = (destructor)Rib_dealloc,
    .tp_methods = Rib_methods,
};

static struct PyModuleDef mrt_module = {
    PyModuleDef_HEAD_INIT, "_mrt", "Native MRT RIB decoder and aggregation.", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__mrt(void) {
    if (PyType_Ready(&RibType) < 0) return NULL;
    PyObject *m = PyModule_Create(&mrt_module);
    if (!m) return NULL;
    if (PyModule_AddIntConstant(m, "COMPRESSION_NONE", COMPRESSION_NONE) ||
        PyModule_AddIntConstant(m, "COMPRESSION_GZIP", COMPRESSION_GZIP) ||
        PyModule_AddIntConstant(m, "COMPRESSION_BZIP2", COMPRESSION_BZIP2)) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&RibType);
    if (PyModule_AddObject(m, "Rib", (PyObject *)&RibType) < 0) {
        Py_DECREF(&RibType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
