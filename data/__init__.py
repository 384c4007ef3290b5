"""Record types, dataset loaders and small bundled problem sets (the ground floor)."""
