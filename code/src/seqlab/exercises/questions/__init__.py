"""The graded questions of each chapter, declared as code: one module per chapter.

``seqlab.exercises.questions.<chapter>`` (the chapter's notebook name) holds the tuple
``QUESTIONS`` of its :class:`~seqlab.exercises.Question` declarations: oracle, draws, the edge
cases the public test names, what is forbidden, and the bounds the question's text states. A
notebook's public test cell is then one line, ``check("<question>", <answer>)``.

What only the hidden test may know (more edge cases, an oracle whose formula the public side must
not show) is not here: it lives in ``seqlab_hidden.<chapter>`` (``code/tools/grading/seqlab_hidden``
in the repository), which only the autograder zip carries (docs/contributors.md).
"""
