"""The book's Sphinx extensions (see _config.yml), its cache plugin and one-page builds."""
