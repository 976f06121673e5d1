"""The course's tools, one folder per concern (book/, handout/, grading/, checks/, reports/,
diagrams/; docs/contributors.md, "The tools", says what each module does). Run each as
``python -m tools.<folder>.<module>`` with ``PYTHONPATH=code``, as the Makefile does."""
