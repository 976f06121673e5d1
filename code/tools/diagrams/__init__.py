"""The concept diagrams of the chapters."""
