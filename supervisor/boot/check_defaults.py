"""The defaults of `coldrun check` that its parser shows, kept light: the parser is built at every boot."""

LOAD_TIMEOUT = 60.0          # seconds one load may take (a JVM starts in ~1 s; module-level set-up may take longer)
REHEARSAL_ITERATIONS = 5     # in-process iterations each key's rehearsal execution runs
