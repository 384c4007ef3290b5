"""One module per CLI command; each imports heavy libraries only when it runs."""
