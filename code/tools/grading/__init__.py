"""Grading submissions with the autograder zips."""
