"""What students get: the student notebook and the published site."""
