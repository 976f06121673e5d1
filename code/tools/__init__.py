"""The course's tools, by concern (run each as ``python -m tools.<folder>.<module>`` with
``PYTHONPATH=code``, as the Makefile does):

- ``course``: where the chapters are, the book's settings, notebooks read, written and executed;
- ``otter_format``: the exercises' otter-grader format (markers, questions, hidden tests);
- ``book/``: the book's Sphinx extensions, the pytest plugin that fills its execution cache, and
  ``page`` (one chapter's page);
- ``handout/``: the student notebook (``student``, ``plain_notebook``) and ``publish``;
- ``grading/``: ``grade`` (with its ``sandbox``) and ``check_autograder``;
- ``checks/``: ``leak_check`` (the built book), ``check_notebooks`` (JupyterLab in Chromium) and
  ``a11y_check`` (axe-core on every built page);
- ``reports/``: timings, robustness, glued values, the OpenMP wait policy;
- ``diagrams/``: the concept diagrams (``python -m tools.diagrams.build``).
"""
