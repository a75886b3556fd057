/* Placeholder so the tree builds while this module is being written; replaced by the real module. */
#include <Python.h>
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "analysis._pelt", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__pelt(void) { return PyModule_Create(&mod); }
