"""Checks of what students get: the built site, the notebooks in JupyterLab."""
