/* Placeholder so the tree builds while this module is being written; replaced by the real module. */
#include <Python.h>
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "libkruntime._kruntime", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__kruntime(void) { return PyModule_Create(&mod); }
