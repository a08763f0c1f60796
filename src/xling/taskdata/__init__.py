"""Task data: readers for the real downloaded formats, writers for the normalised task files
(docs/ARCHITECTURE.md, "Normalised task files")."""
