/* ci_fast._speed.fib(n): the n-th Fibonacci number (0 <= n <= 92), computed
 * in C, so that a cell calling it proves the extension module was mapped. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *fib(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    long long a = 0, b = 1;

    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0 || n > 92) {
        PyErr_SetString(PyExc_ValueError, "n must be in 0..92");
        return NULL;
    }
    for (long i = 0; i < n; i++) {
        long long t = a + b;
        a = b;
        b = t;
    }
    return PyLong_FromLongLong(a);
}

static PyMethodDef methods[] = {
    {"fib", fib, METH_O, "The n-th Fibonacci number, computed in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "ci_fast._speed", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speed(void)
{
    return PyModule_Create(&module);
}
