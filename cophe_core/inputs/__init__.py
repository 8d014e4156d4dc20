"""The formats a user hands in: label and score files, archives, datasets of many files, samples."""
