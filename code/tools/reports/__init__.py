"""Reports: run by hand, they print numbers, and fail nothing."""
