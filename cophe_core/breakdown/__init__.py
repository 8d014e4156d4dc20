"""Error analysis of an evaluation: intervals and tests, comparisons, families, substitutions, slices, documents, trees."""
