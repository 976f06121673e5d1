"""What only the hidden tests know, per chapter: ``seqlab_hidden.<chapter>`` holds ``HIDDEN``,
``{question name: {field of Question: value}}`` (hidden edge cases, a hidden oracle and draws, ...),
which :meth:`seqlab.exercises.Question.with_hidden` puts over the question's public declaration.

Never installed with ``seqlab``: ``make student`` puts it in each autograder zip as a wheel of its
own (``tools.handout.student.hidden_wheel``), and the grader loads it from there; the repository's
tests import it from ``code/tools/grading``.
"""
